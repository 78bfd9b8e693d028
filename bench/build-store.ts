// Builds the fixture store of the list and start-up benchmarks in-process with the store's
// own API (MaildirStore.add: the same durable writes and index journal the server makes),
// many adds in flight so group commits share the fsyncs. Run by bench/lib/store-fixture.ts:
//
//   node --import tsx bench/build-store.ts <data-dir> <messages>
import { MaildirStore } from '../src/server/store/maildir';
import { buildMessage } from './lib/smtp-load';
import { fixtureRecipient, FIXTURE_MESSAGE_BYTES } from './lib/store-fixture';

/** Adds in flight: enough for group commits to batch dozens of messages per fsync. */
const IN_FLIGHT = 256;
/** Progress line every this many messages. */
const PROGRESS_EVERY = 10_000;

async function main(): Promise<void> {
  const [dir, countText] = process.argv.slice(2);
  const count = Number(countText);
  if (!dir || !Number.isSafeInteger(count) || count <= 0) {
    process.stderr.write('usage: build-store.ts <data-dir> <messages>\n');
    process.exit(64);
  }
  const store = new MaildirStore({ dir, retention: { maxMessages: 0, maxAgeMs: 0 }, log: (level, msg) => process.stderr.write(`${level} ${msg}\n`) });
  await store.open();
  const t0 = Date.now();
  let next = 0;
  let done = 0;
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async () => {
      while (next < count) {
        const i = next++;
        const to = fixtureRecipient(i);
        const at = to.indexOf('@');
        const raw = buildMessage(FIXTURE_MESSAGE_BYTES, 'sender@bench.test', to, `Your code is ${100000 + (i % 900000)} (#${i})`);
        await store.add([{ inbox: to.slice(0, at), domain: to.slice(at + 1) }], raw, 'smtp');
        if (++done % PROGRESS_EVERY === 0) process.stderr.write(`  ${done} / ${count} stored (${((Date.now() - t0) / 1000).toFixed(0)} s)\n`);
      }
    }),
  );
  await store.close();
  process.stdout.write(JSON.stringify({ messages: done, seconds: (Date.now() - t0) / 1000 }) + '\n');
}

main().catch((e: unknown) => {
  process.stderr.write(`build-store failed: ${e instanceof Error ? e.stack : String(e)}\n`);
  process.exit(1);
});
