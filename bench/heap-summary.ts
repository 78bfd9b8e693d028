// Sums up V8 heap snapshots (.heapsnapshot, e.g. from `extensionHeap.ts --snapshots DIR`) by
// constructor: count and self size, and with two snapshots the growth between them, largest
// first; for the largest growths, what holds those objects (the constructors of their direct
// retainers, by the retained bytes).
//
//   node --import tsx bench/heap-summary.ts before.heapsnapshot after.heapsnapshot [--top 40]
import * as fs from 'node:fs';

interface Snapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[]]; edge_fields: string[]; edge_types: [string[]] } };
  nodes: number[];
  edges: number[];
  strings: string[];
}

interface Group {
  count: number;
  bytes: number;
}

interface Summary {
  groups: Map<string, Group>;
  /** For each group key: retainer group key → bytes of the group's objects it holds directly. */
  retainers: Map<string, Map<string, number>>;
  total: number;
}

/** A node's group: its constructor for objects, else its V8 type (strings, closures by name, arrays…). */
function keyOf(type: string, name: string): string {
  switch (type) {
    case 'object':
      return name;
    case 'closure':
      return `(closure ${name || 'anonymous'})`;
    case 'string':
    case 'concatenated string':
    case 'sliced string':
      return '(string)';
    default:
      return `(${type}${type === 'hidden' || type === 'code' || type === 'array' ? ` ${name.slice(0, 40)}` : ''})`;
  }
}

function summarise(file: string): Summary {
  const snap = JSON.parse(fs.readFileSync(file, 'utf8')) as Snapshot;
  const meta = snap.snapshot.meta;
  const nf = meta.node_fields.length;
  const ef = meta.edge_fields.length;
  const typeAt = meta.node_fields.indexOf('type');
  const nameAt = meta.node_fields.indexOf('name');
  const sizeAt = meta.node_fields.indexOf('self_size');
  const edgeCountAt = meta.node_fields.indexOf('edge_count');
  const toAt = meta.edge_fields.indexOf('to_node');
  const edgeTypeAt = meta.edge_fields.indexOf('type');
  const edgeNameAt = meta.edge_fields.indexOf('name_or_index');
  const edgeTypes = meta.edge_types[0];
  const types = meta.node_types[0];
  const { nodes, edges, strings } = snap;
  const count = nodes.length / nf;
  const keys: string[] = new Array(count);
  const groups = new Map<string, Group>();
  let total = 0;
  for (let i = 0; i < count; i++) {
    const k = keyOf(types[nodes[i * nf + typeAt]], strings[nodes[i * nf + nameAt]]);
    keys[i] = k;
    const size = nodes[i * nf + sizeAt];
    total += size;
    const g = groups.get(k) ?? { count: 0, bytes: 0 };
    g.count++;
    g.bytes += size;
    groups.set(k, g);
  }
  const retainers = new Map<string, Map<string, number>>();
  let e = 0;
  for (let i = 0; i < count; i++) {
    const n = nodes[i * nf + edgeCountAt];
    for (let j = 0; j < n; j++, e += ef) {
      const et = edgeTypes[edges[e + edgeTypeAt]];
      if (et === 'weak' || et === 'shortcut') continue;
      const to = edges[e + toAt] / nf;
      const m = retainers.get(keys[to]) ?? new Map<string, number>();
      // The retainer and the property it holds the object by (elements and internal slots unnamed).
      const via = et === 'property' || et === 'context' ? `${keys[i]}.${strings[edges[e + edgeNameAt]]}` : keys[i];
      m.set(via, (m.get(via) ?? 0) + nodes[to * nf + sizeAt]);
      retainers.set(keys[to], m);
    }
  }
  return { groups, retainers, total };
}

const mb = (b: number): string => (b / 1024 / 1024).toFixed(2);

function main(): void {
  const files = process.argv.slice(2).filter((a) => !a.startsWith('--') && !/^\d+$/.test(a));
  const topAt = process.argv.indexOf('--top');
  const top = topAt > 0 ? Number(process.argv[topAt + 1]) : 40;
  if (files.length === 0 || files.length > 2) {
    process.stderr.write('usage: heap-summary.ts <snapshot> [<later snapshot>] [--top N]\n');
    process.exit(2);
  }
  const before = files.length === 2 ? summarise(files[0]) : undefined;
  const after = summarise(files[files.length - 1]);
  const rows = [...after.groups].map(([k, g]) => {
    const b = before?.groups.get(k) ?? { count: 0, bytes: 0 };
    return { k, count: g.count, bytes: g.bytes, dCount: g.count - b.count, dBytes: g.bytes - b.bytes };
  });
  rows.sort((a, b) => (before ? b.dBytes - a.dBytes : b.bytes - a.bytes));
  process.stdout.write(before ? `total self size ${mb(before.total)} → ${mb(after.total)} MB (Δ ${mb(after.total - before.total)})\n` : `total self size ${mb(after.total)} MB\n`);
  process.stdout.write(`${'Δ MB'.padStart(8)} ${'Δ count'.padStart(9)} ${'MB'.padStart(8)} ${'count'.padStart(9)}  group — held by (MB)\n`);
  for (const r of rows.slice(0, top)) {
    const held = [...(after.retainers.get(r.k) ?? new Map<string, number>())].sort((a, b) => b[1] - a[1]).slice(0, 3);
    process.stdout.write(
      `${mb(r.dBytes).padStart(8)} ${String(r.dCount).padStart(9)} ${mb(r.bytes).padStart(8)} ${String(r.count).padStart(9)}  ${r.k.slice(0, 60)} — ${held.map(([k, b]) => `${k.slice(0, 40)} ${mb(b)}`).join(', ')}\n`,
    );
  }
}

main();
