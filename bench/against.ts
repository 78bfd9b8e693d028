// `npm run bench -- --against <git-ref>`: every selected row measured for this checkout's build
// and for another commit's, interleaved in one run (ref, this, ref), printed side by side with
// their ratio and the spread of the ref's two runs, so "no worse" is read against the noise of
// the same minutes rather than against a figure from another day.
//
// The ref is built once into a worktree of its own under the bench cache
// (`${XDG_CACHE_HOME:-~/.cache}/test-inbox/bench/builds/<sha>/`: `git worktree add --detach`,
// `npm ci`, `node esbuild.mjs`) and kept there, keyed by the commit.
//
// Which code measures what:
// - server rows (smtp, inject, fsync, list, bigmail, stall, recipients, team) run THIS
//   checkout's harness (load generators, report) against the ref's `dist/cli.js`, named in
//   TEST_INBOX_BENCH_PRODUCT (bench/lib/ours.ts); the store fixture and the in-process store
//   row use the ref's own bench/build-store.ts and bench/store-ingest.ts, which import its store;
// - workbench rows (install, arrival, open, heap) load the extension from their own tree, so
//   they run the ref's own harness in its worktree.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { benchCacheDir } from './lib/maildev';
import { PRODUCT_ENV, REPO_ROOT } from './lib/ours';
import { type Figure, writeJson } from './lib/report';

/** Rows whose harness loads the extension from its own tree (run with the ref's own bench code). */
const WORKBENCH_ROWS = new Set(['install', 'arrival', 'open', 'heap']);
/** Marker written once a ref's build finished. */
const BUILT_MARKER = '.bench-built';

/** Ratio targets against a ref, read only in --against runs (issue 27 point 3). */
const AGAINST_TARGETS: ReadonlyArray<{ ref: RegExp; figure: RegExp; ratio: number }> = [
  // "SMTP, 8 connections: ≥ 1.0× the 4a65700 build."
  { ref: /^4a65700/, figure: /^SMTP ingest, 4 KB, 8 conns$/, ratio: 1.0 },
  // "HTTP inject, 32 in flight: ≥ 2× 67641ac's rate in the same run."
  { ref: /^67641ac/, figure: /^HTTP inject, 32 in flight/, ratio: 2.0 },
];

export interface AgainstOptions {
  ref: string;
  rows: string[];
  /** Arguments passed through to each row's run (--quick, --rounds N, --store S, --profile). */
  passThrough: string[];
  /** Runs of the ref per row, interleaved around this build's run (2: ref, this, ref). */
  refRuns: number;
  log: (line: string) => void;
}

interface Build {
  label: string;
  /** The tree whose dist/ is measured. */
  root: string;
  isHead: boolean;
}

function git(args: string[], cwd = REPO_ROOT): string {
  const r = spawnSync('git', args, { cwd, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`git ${args.join(' ')} failed: ${(r.stderr || r.stdout).trim()}`);
  return r.stdout.trim();
}

function run(cmd: string, args: string[], cwd: string, log: (line: string) => void): void {
  log(`  (${path.basename(cwd)}) ${cmd} ${args.join(' ')}`);
  const r = spawnSync(cmd, args, { cwd, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} in ${cwd} failed (${r.status}): ${(r.stderr || r.stdout).trim().split('\n').slice(-8).join(' | ')}`);
}

/** The ref's build in its cached worktree, building it when the cache lacks it. */
export function prepareRef(ref: string, log: (line: string) => void): Build {
  const sha = git(['rev-parse', '--verify', `${ref}^{commit}`]);
  const short = sha.slice(0, 7);
  const dir = path.join(benchCacheDir(), 'builds', sha);
  if (!existsSync(path.join(dir, BUILT_MARKER))) {
    log(`building ${ref} (${short}) into ${dir} …`);
    if (existsSync(dir)) {
      rmSync(dir, { recursive: true, force: true });
      git(['worktree', 'prune']);
    }
    mkdirSync(path.dirname(dir), { recursive: true });
    git(['worktree', 'add', '--detach', '--force', dir, sha]);
    const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
    run(npm, ['ci', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error'], dir, log);
    run(process.execPath, ['esbuild.mjs'], dir, log);
    writeFileSync(path.join(dir, BUILT_MARKER), `${sha}\n`);
  } else {
    log(`using the cached build of ${ref} (${short}) in ${dir}`);
  }
  return { label: ref === short || sha.startsWith(ref) ? short : `${ref} (${short})`, root: dir, isHead: false };
}

/** One row of one build: its figures, read from the JSON the run writes. */
async function runRow(row: string, build: Build, opts: AgainstOptions): Promise<{ figures: Figure[]; loadavg: number[]; problem?: string }> {
  const harness = WORKBENCH_ROWS.has(row) && !build.isHead ? build.root : REPO_ROOT;
  const env = { ...process.env };
  if (build.isHead) delete env[PRODUCT_ENV];
  else env[PRODUCT_ENV] = build.root;
  const out = path.join(harness, '.test-output', 'bench.json');
  rmSync(out, { force: true });
  opts.log(`row ${row}: ${build.label}${harness === REPO_ROOT ? '' : ' (its own harness)'}`);
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(harness, 'bench', 'run.ts'), '--only', row, ...opts.passThrough], {
    cwd: harness,
    env,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let tail = '';
  child.stderr.on('data', (d: Buffer) => {
    tail = (tail + d.toString('utf8')).slice(-4000);
    for (const line of d.toString('utf8').split('\n')) if (line.trim()) process.stderr.write(`    ${line}\n`);
  });
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  if (!existsSync(out)) return { figures: [], loadavg: os.loadavg(), problem: `the run exited ${code} without figures: ${tail.trim().split('\n').slice(-3).join(' | ')}` };
  const json = JSON.parse(readFileSync(out, 'utf8')) as { figures: Figure[]; context?: { after?: { loadavg?: number[] } } };
  return { figures: json.figures, loadavg: json.context?.after?.loadavg ?? os.loadavg() };
}

/** More is better for rates, less for everything else, unless the figure's target says. */
function higherIsBetter(f: Figure): boolean {
  if (f.target) return f.target.op === '>=';
  // Rates, and shares done (the files written by a window's end).
  return /\/s$/.test(f.unit) || f.unit === '%';
}

function fmt(v: number | undefined): string {
  if (v === undefined || !Number.isFinite(v)) return '—';
  const digits = Math.abs(v) >= 100 ? 0 : Math.abs(v) >= 10 ? 1 : 2;
  return v.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
}

export interface AgainstRow {
  figure: string;
  unit: string;
  head?: number;
  ref: Array<number | undefined>;
  ratio?: number;
  spread?: number;
  verdict: string;
  target?: string;
}

/**
 * Compares this build's value with the ref's runs: `better`, `same` (within the range of the
 * ref's own runs), or `WORSE` (beyond the worse of them); a ratio target, when the row has one.
 */
export function compareRow(head: Figure | undefined, refs: Array<Figure | undefined>, refLabel: string): AgainstRow {
  const any = head ?? refs.find(Boolean)!;
  const refValues = refs.map((f) => (f?.value !== undefined && Number.isFinite(f.value) ? f.value : undefined));
  const known = refValues.filter((v): v is number => v !== undefined);
  const h = head?.value !== undefined && Number.isFinite(head.value) ? head.value : undefined;
  const mean = known.length ? known.reduce((a, b) => a + b, 0) / known.length : undefined;
  const spread = known.length > 1 ? Math.max(...known) - Math.min(...known) : undefined;
  const up = higherIsBetter(any);
  let verdict = 'SKIP';
  // A figure of the machine (the disk probes), not of either build: printed, never judged.
  if (/^disk:/.test(any.name)) verdict = 'context';
  else if (h !== undefined && known.length) {
    const worst = up ? Math.min(...known) : Math.max(...known);
    const best = up ? Math.max(...known) : Math.min(...known);
    verdict = (up ? h > best : h < best) ? 'better' : (up ? h >= worst : h <= worst) ? 'same' : 'WORSE';
  }
  const ratio = h !== undefined && mean ? h / mean : undefined;
  const t = AGAINST_TARGETS.find((x) => x.ref.test(refLabel) && x.figure.test(any.name));
  let target: string | undefined;
  if (t) {
    target = `≥ ${t.ratio}× ${refLabel.split(' ')[0]}: ${ratio === undefined ? 'SKIP' : ratio >= t.ratio ? 'PASS' : 'MISS'}`;
  }
  return { figure: any.name, unit: any.unit, head: h, ref: refValues, ratio, spread, verdict, target };
}

export function formatAgainst(rows: AgainstRow[], refLabel: string, refRuns: number): string {
  const header = ['figure', 'unit', 'this build', ...Array.from({ length: refRuns }, (_, i) => `${refLabel} #${i + 1}`), 'this ÷ ref', 'ref spread', 'vs ref', 'target'];
  const table = [
    header,
    ...rows.map((r) => [
      r.figure,
      r.unit,
      fmt(r.head),
      ...Array.from({ length: refRuns }, (_, i) => fmt(r.ref[i])),
      r.ratio === undefined ? '—' : `${r.ratio.toFixed(2)}×`,
      r.spread === undefined ? '—' : fmt(r.spread),
      r.verdict,
      r.target ?? '',
    ]),
  ];
  const widths = header.map((_, c) => Math.max(...table.map((r) => r[c].length)));
  const line = (r: string[]) => r.map((cell, c) => cell.padEnd(widths[c])).join('  ').trimEnd();
  return [line(table[0]), widths.map((w) => '-'.repeat(w)).join('  '), ...table.slice(1).map(line)].join('\n');
}

export async function runAgainst(opts: AgainstOptions): Promise<void> {
  const started = Date.now();
  const loadBefore = os.loadavg();
  const head: Build = { label: 'this build', root: REPO_ROOT, isHead: true };
  const ref = prepareRef(opts.ref, opts.log);
  const order: Build[] = [];
  for (let i = 0; i < opts.refRuns; i++) {
    order.push(ref);
    if (i === 0) order.push(head);
  }
  const rows: AgainstRow[] = [];
  const raw: Record<string, Record<string, Figure[][]>> = {};
  const problems: string[] = [];
  const loads: number[] = [];
  for (const row of opts.rows) {
    const byBuild: Record<string, Figure[][]> = { head: [], ref: [] };
    for (const build of order) {
      const r = await runRow(row, build, opts);
      loads.push(r.loadavg[0]);
      if (r.problem) problems.push(`${row} / ${build.label}: ${r.problem}`);
      (build.isHead ? byBuild.head : byBuild.ref).push(r.figures);
    }
    raw[row] = byBuild;
    const names: string[] = [];
    for (const list of [...byBuild.head, ...byBuild.ref]) for (const f of list) if (!names.includes(f.name)) names.push(f.name);
    for (const name of names) {
      const h = byBuild.head[0]?.find((f) => f.name === name);
      const refs = byBuild.ref.map((list) => list.find((f) => f.name === name));
      rows.push(compareRow(h, refs, ref.label));
    }
  }
  const loadAfter = os.loadavg();
  process.stdout.write(
    `\nTest Inbox benchmarks, this build against ${ref.label} (${os.cpus().length} cores, node ${process.versions.node}, ${((Date.now() - started) / 1000).toFixed(0)} s; ` +
      `each row: ${ref.label}, this build${opts.refRuns > 1 ? `, ${ref.label}` : ''})\n` +
      `load before ${loadBefore.map((l) => l.toFixed(1)).join(' ')}; after ${loadAfter.map((l) => l.toFixed(1)).join(' ')}; 1-min load at the end of each row run: ${loads.map((l) => l.toFixed(1)).join(' ')}\n\n` +
      `${formatAgainst(rows, ref.label, opts.refRuns)}\n` +
      `\nvs ref: better / same (within the range of the ref's ${opts.refRuns} runs) / WORSE (beyond the worse of them).\n` +
      (problems.length ? `\nproblems:\n${problems.map((p) => `  * ${p}`).join('\n')}\n` : ''),
  );
  const out = path.join(REPO_ROOT, '.test-output', `bench-against-${ref.label.split(' ')[0]}.json`);
  writeJson(out, { date: new Date().toISOString(), ref: opts.ref, refRoot: ref.root, load: { before: loadBefore, after: loadAfter, perRun: loads }, rows, raw, problems });
  process.stdout.write(`\nwritten to ${path.relative(REPO_ROOT, out)}\n`);
}
