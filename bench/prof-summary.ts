// Summarises a V8 .cpuprofile (from `node --cpu-prof`, e.g. `npm run bench -- --profile`):
// self time by function and by file, and total (inclusive) time of the hottest functions.
//
//   node --import tsx bench/prof-summary.ts .test-output/prof/<file>.cpuprofile [top=25]
import { readFileSync } from 'node:fs';
import * as path from 'node:path';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

function label(n: ProfileNode): string {
  const f = n.callFrame;
  const file = f.url ? path.basename(f.url.replace(/^file:\/\//, '')) : '';
  return `${f.functionName || '(anonymous)'}${file ? ` ${file}:${f.lineNumber + 1}` : ''}`;
}

function fileOf(n: ProfileNode): string {
  const url = n.callFrame.url.replace(/^file:\/\//, '');
  if (!url) return n.callFrame.functionName || '(native)';
  const nm = url.lastIndexOf('node_modules/');
  if (nm >= 0) return url.slice(nm + 'node_modules/'.length).split('/').slice(0, 1).join('/') + ' (dep)';
  if (url.startsWith('node:')) return url;
  return path.basename(url);
}

export function summarise(profile: Profile, top: number): string {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const self = new Map<number, number>();
  for (let i = 0; i < profile.samples.length; i++) {
    const dt = profile.timeDeltas[i] ?? 0;
    self.set(profile.samples[i], (self.get(profile.samples[i]) ?? 0) + dt);
  }
  const total = (profile.endTime - profile.startTime) / 1000;
  const selfByLabel = new Map<string, number>();
  const selfByFile = new Map<string, number>();
  const inclusive = new Map<string, number>();
  for (const [id, us] of self) {
    const n = byId.get(id);
    if (!n) continue;
    selfByLabel.set(label(n), (selfByLabel.get(label(n)) ?? 0) + us / 1000);
    selfByFile.set(fileOf(n), (selfByFile.get(fileOf(n)) ?? 0) + us / 1000);
    // Inclusive: every distinct frame on the stack gets the sample once.
    const seen = new Set<string>();
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
      const l = label(byId.get(cur) as ProfileNode);
      if (seen.has(l)) continue;
      seen.add(l);
      inclusive.set(l, (inclusive.get(l) ?? 0) + us / 1000);
    }
  }
  const fmt = (m: Map<string, number>) =>
    [...m]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([k, ms]) => `${ms.toFixed(0).padStart(8)} ms ${((ms / total) * 100).toFixed(1).padStart(5)} %  ${k}`)
      .join('\n');
  const idle = selfByLabel.get('(idle)') ?? 0;
  return [
    `profile: ${total.toFixed(0)} ms wall, ${(total - idle).toFixed(0)} ms busy (${(((total - idle) / total) * 100).toFixed(0)} %)`,
    '',
    'self time by file:',
    fmt(selfByFile),
    '',
    'self time by function:',
    fmt(selfByLabel),
    '',
    'inclusive time by function:',
    fmt(inclusive),
  ].join('\n');
}

if (require.main === module) {
  const file = process.argv[2];
  if (!file) {
    process.stderr.write('usage: prof-summary.ts <file.cpuprofile> [top]\n');
    process.exit(2);
  }
  const top = Number(process.argv[3] ?? 25);
  process.stdout.write(summarise(JSON.parse(readFileSync(file, 'utf8')) as Profile, top) + '\n');
}
