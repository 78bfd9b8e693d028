// The benchmark report: each figure beside its reference and target, printed as a table
// and written as JSON.
import { mkdirSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

export interface Target {
  /** `>=` more is better, `<=` less is better. */
  op: '>=' | '<=';
  value: number;
  /** How the target reads in the table, e.g. "≥ MailDev" or "≤ 2 ms". */
  label: string;
}

export interface Figure {
  name: string;
  unit: string;
  /** Measured value of our server; undefined when it could not be measured. */
  value?: number;
  reference?: { name: string; value?: number };
  target?: Target;
  /** PASS / MISS, or SKIP when the figure or its reference could not be measured. */
  result: 'PASS' | 'MISS' | 'SKIP' | 'INFO';
  note?: string;
}

/** Builds a figure and decides PASS/MISS when both sides are known. */
export function figure(f: Omit<Figure, 'result'>): Figure {
  if (!f.target) return { ...f, result: 'INFO' };
  if (f.value === undefined || !Number.isFinite(f.value) || !Number.isFinite(f.target.value)) return { ...f, result: 'SKIP' };
  const pass = f.target.op === '>=' ? f.value >= f.target.value : f.value <= f.target.value;
  return { ...f, result: pass ? 'PASS' : 'MISS' };
}

function fmt(v: number | undefined, unit: string): string {
  if (v === undefined || !Number.isFinite(v)) return '—';
  const digits = Math.abs(v) >= 100 ? 0 : Math.abs(v) >= 10 ? 1 : 2;
  return `${v.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits })} ${unit}`.trim();
}

/** The table as text. */
export function formatTable(figures: Figure[]): string {
  const rows = [
    ['figure', 'ours', 'reference', 'target', 'result'],
    ...figures.map((f) => [
      f.name,
      fmt(f.value, f.unit),
      f.reference ? `${f.reference.name}: ${fmt(f.reference.value, f.unit)}` : '',
      f.target?.label ?? '',
      f.result,
    ]),
  ];
  const widths = rows[0].map((_, c) => Math.max(...rows.map((r) => r[c].length)));
  const line = (r: string[]) => r.map((cell, c) => cell.padEnd(widths[c])).join('  ').trimEnd();
  const out = [line(rows[0]), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.slice(1).map(line)];
  const notes = figures.filter((f) => f.note).map((f) => `  * ${f.name}: ${f.note}`);
  return [...out, ...(notes.length ? ['', 'notes:', ...notes] : [])].join('\n');
}

export function machine(): Record<string, unknown> {
  const cpus = os.cpus();
  return {
    node: process.versions.node,
    platform: `${os.platform()} ${os.release()}`,
    cpus: cpus.length,
    cpuModel: cpus[0]?.model,
    memoryMb: Math.round(os.totalmem() / 1024 / 1024),
    loadavg: os.loadavg(),
  };
}

export function writeJson(file: string, data: unknown): void {
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, JSON.stringify(data, null, 2) + '\n');
}
