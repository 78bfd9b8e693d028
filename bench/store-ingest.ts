// The store alone, in-process: MaildirStore.add of a 4 KB message with N adds in flight,
// no SMTP or HTTP in front. Separates the storage cost from the protocol cost of the ingest
// figures. Run by bench/run.ts in a child process:
//
//   node --import tsx bench/store-ingest.ts <empty-dir> <in-flight> <warmup-ms> <window-ms> [process|strict]
//
// Prints one JSON line: {addsPerSec, p50Ms, p99Ms, cpuMsPerAdd}.
import { isDurability } from '../src/shared/contract';
import { MaildirStore } from '../src/server/store/maildir/store';
import { buildMessage, DEFAULT_MESSAGE_BYTES } from './lib/smtp-load';
import { percentile } from './lib/stats';
import { counts, newWindow, runWindow } from './lib/window';

async function main(): Promise<void> {
  const [dir, inFlightText, warmupText, windowText, durabilityText = 'strict'] = process.argv.slice(2);
  const inFlight = Number(inFlightText);
  const warmupMs = Number(warmupText);
  const windowMs = Number(windowText);
  if (!dir || !(inFlight > 0) || !(warmupMs >= 0) || !(windowMs > 0) || !isDurability(durabilityText)) {
    process.stderr.write('usage: store-ingest.ts <empty-dir> <in-flight> <warmup-ms> <window-ms> [process|strict]\n');
    process.exit(64);
  }
  const store = new MaildirStore({ dir, retention: { maxMessages: 0, maxAgeMs: 0 }, durability: durabilityText });
  await store.open();
  const raw = buildMessage(DEFAULT_MESSAGE_BYTES, 'sender@bench.test', 'store@inbox.test', 'store ingest');
  const w = newWindow();
  let added = 0;
  const latencies: number[] = [];
  const workers = Array.from({ length: inFlight }, async (_, i) => {
    while (!w.stopping) {
      const t0 = performance.now();
      await store.add([{ domain: 'inbox.test', inbox: `store${i % 8}` }], raw, 'smtp');
      if (counts(w)) {
        added++;
        latencies.push(performance.now() - t0);
      }
    }
  });
  const ownCpuMs = (): number => {
    const u = process.cpuUsage();
    return (u.user + u.system) / 1000;
  };
  const { windowMs: elapsed, cpuMs } = await runWindow(w, { warmupMs, durationMs: windowMs, cpuMs: ownCpuMs }, workers);
  await store.close();
  latencies.sort((a, b) => a - b);
  process.stdout.write(
    JSON.stringify({
      addsPerSec: added / (elapsed / 1000),
      p50Ms: percentile(latencies, 50),
      p99Ms: percentile(latencies, 99),
      cpuMsPerAdd: added > 0 ? cpuMs / added : NaN,
    }) + '\n',
  );
}

main().catch((e: unknown) => {
  process.stderr.write(`store-ingest failed: ${e instanceof Error ? e.stack : String(e)}\n`);
  process.exit(1);
});
