// Issue 35 G5: one 20 MB Resend text (`POST /emails`) into the built CLI (bench/lib/ours.ts) while
// /healthz is asked one at a time, 5 ms apart: the send's time, /healthz p50/p99/max meanwhile, and
// the server's peak RSS (all its threads). No test asserts any figure here.
//
//   node --import tsx bench/provider-compose.ts
//   TEST_INBOX_BENCH_PRODUCT=/path/with/dist node --import tsx bench/provider-compose.ts   # another build
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import { generateToken, parseReadyLine, type ReadyLine, serveArgs, tokensEnv } from '../src/shared/contract';
import { CLI, PRODUCT_ROOT } from './lib/ours';
import { rssMb, startWithReadyLine } from './lib/procs';
import { percentile } from './lib/stats';

async function main(): Promise<void> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'bench-g5-'));
  const tokens = { apiToken: generateToken(), webhookToken: generateToken(), providerKey: `re_${generateToken()}` };
  const s = await startWithReadyLine<ReadyLine>(process.execPath, [CLI, ...serveArgs({ httpPort: 0, smtpPort: 0, dataDir })], { env: { ...process.env, ...tokensEnv(tokens) }, cwd: PRODUCT_ROOT }, parseReadyLine);
  const line = 'the quick brown fox jumps over the lazy dog 0123456789 ';
  const text = Array.from({ length: Math.ceil((20 * 1024 * 1024) / (line.length + 8)) }, (_, i) => `${i} ${line}`).join('\n');
  const body = JSON.stringify({ from: 'a@acme.test', to: 'huge@inbox.test', subject: 'Huge', text });
  let done = false;
  const health: number[] = [];
  let rss = 0;
  const prober = (async () => {
    while (!done) {
      const t0 = performance.now();
      await new Promise<void>((r, j) => http.get(`${s.ready.http}/healthz`, { agent: false }, (res) => { res.resume(); res.on('end', () => r()); }).on('error', j));
      health.push(performance.now() - t0);
      rss = Math.max(rss, rssMb(s.child.pid ?? 0));
      await new Promise((r) => setTimeout(r, 5));
    }
  })();
  const t0 = performance.now();
  const status = await new Promise<number>((resolve, reject) => {
    const req = http.request(`${s.ready.http}/emails`, { method: 'POST', headers: { authorization: `Bearer ${tokens.providerKey}`, 'content-type': 'application/json' } }, (res) => { res.resume(); res.on('end', () => resolve(res.statusCode ?? 0)); });
    req.on('error', reject);
    req.end(body);
  });
  const ms = performance.now() - t0;
  done = true;
  await prober;
  health.sort((a, b) => a - b);
  console.log(`${PRODUCT_ROOT}: status ${status}, send ${ms.toFixed(0)} ms, /healthz n=${health.length} p50 ${percentile(health, 50).toFixed(1)} p99 ${percentile(health, 99).toFixed(1)} max ${health[health.length - 1].toFixed(1)} ms, server RSS peak ${rss.toFixed(0)} MB, load ${os.loadavg().map((l) => l.toFixed(2)).join(', ')}`);
  await s.stop();
  rmSync(dataDir, { recursive: true, force: true });
}
void main();
