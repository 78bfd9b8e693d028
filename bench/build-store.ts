// Builds a fixture store of the list and start-up benchmarks. Run by bench/lib/store-fixture.ts:
//
//   node --import tsx bench/build-store.ts <data-dir> <messages> [<other inboxes>] [--direct]
//
// By default in-process with the store's own API (MaildirStore.add: the same durable writes and
// index journal the server makes), many adds in flight so group commits share the fsyncs.
// `--direct` (the million-message store: a million durable adds take over an hour on a busy
// 2-core machine) writes the same files without the fsyncs: each message through the store's
// own file mapping (layout.ts messageFileOf), headers read by the store's own function, and the
// index journal's lines by journal.ts addLine, then one fsync of the journal. The code detection
// (PostalMime + core/otp, ~2.5 ms a message under tsx) runs on every CODE_CHECK_EVERY-th message
// only and must find the code the subject carries; the others are given that code.
// The fixture is a cache, checked afterwards by starting the real server on it.
import { mkdirSync, openSync, closeSync, fsyncSync, writeFileSync, writeSync } from 'node:fs';
import * as path from 'node:path';
import { formatMessageId } from '../src/core/ids';
import { detectCode } from '../src/server/store/code';
import { parseIndexedHeaders } from '../src/server/store/headers';
import { addLine, JOURNAL_FILE } from '../src/server/store/maildir/journal';
import { inboxDirOf, messageFileOf, prepareDataDir } from '../src/server/store/maildir/layout';
import { MaildirStore } from '../src/server/store/maildir/store';
import type { MessageMeta } from '../src/server/store/types';
import { buildMessage } from './lib/smtp-load';
import { fixtureRecipient, FIXTURE_MESSAGE_BYTES } from './lib/store-fixture';

/** Adds in flight: enough for group commits to batch dozens of messages per fsync. */
const IN_FLIGHT = 256;
/** Progress line every this many messages. */
const PROGRESS_EVERY = 10_000;
/** The direct builder runs the store's code detection on one message in this many. */
const CODE_CHECK_EVERY = 1000;
/** Journal text written at once by the direct builder. */
const JOURNAL_CHUNK_CHARS = 4 * 1024 * 1024;

function messageOf(i: number, others: number): { domain: string; inbox: string; raw: Buffer; code: string } {
  const to = fixtureRecipient(i, others);
  const at = to.indexOf('@');
  const code = String(100000 + (i % 900000));
  const raw = buildMessage(FIXTURE_MESSAGE_BYTES, 'sender@bench.test', to, `Your code is ${code} (#${i})`);
  return { inbox: to.slice(0, at), domain: to.slice(at + 1), raw, code };
}

async function viaStore(dir: string, count: number, others: number, progress: (done: number) => void): Promise<void> {
  const store = new MaildirStore({ dir, retention: { maxMessages: 0, maxAgeMs: 0 }, log: (level, msg) => process.stderr.write(`${level} ${msg}\n`) });
  await store.open();
  let next = 0;
  let done = 0;
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async () => {
      while (next < count) {
        const { domain, inbox, raw } = messageOf(next++, others);
        await store.add([{ inbox, domain }], raw, 'smtp');
        progress(++done);
      }
    }),
  );
  await store.close();
}

async function direct(dir: string, count: number, others: number, progress: (done: number) => void): Promise<void> {
  await prepareDataDir(dir, (level, msg) => process.stderr.write(`${level} ${msg}\n`));
  const made = new Set<string>();
  const journal = openSync(path.join(dir, JOURNAL_FILE), 'wx', 0o600);
  let text = JSON.stringify(['v', 1]) + '\n' + JSON.stringify(['c', count]) + '\n';
  // One message a millisecond, ending now.
  const start = Date.now() - count;
  for (let i = 0; i < count; i++) {
    const { domain, inbox, raw, code: subjectCode } = messageOf(i, others);
    const key = `${domain}\n${inbox}`;
    if (!made.has(key)) {
      for (const sub of ['tmp', 'new', 'cur']) mkdirSync(path.join(inboxDirOf(dir, domain, inbox), sub), { recursive: true, mode: 0o700 });
      made.add(key);
    }
    const time = start + i;
    const id = formatMessageId(inbox, Math.floor(time / 1000), i + 1);
    const headers = parseIndexedHeaders(raw) ?? { from: '', subject: '' };
    let code = subjectCode;
    if (i % CODE_CHECK_EVERY === 0) {
      const found = await detectCode(raw, false);
      if (found !== subjectCode) throw new Error(`the store detects code ${String(found)} in message ${i}, not ${subjectCode}: the direct builder's shortcut no longer holds`);
      code = found;
    }
    const meta: MessageMeta = { id, domain, inbox, time, from: headers.from, subject: headers.subject, size: raw.length, source: 'smtp', ...(code ? { code } : {}) };
    writeFileSync(messageFileOf(dir, meta, 'new'), raw, { flag: 'wx', mode: 0o600 });
    text += addLine(meta);
    if (text.length >= JOURNAL_CHUNK_CHARS) {
      writeSync(journal, text);
      text = '';
    }
    progress(i + 1);
  }
  writeSync(journal, text);
  fsyncSync(journal);
  closeSync(journal);
}

async function main(): Promise<void> {
  const args = process.argv.slice(2).filter((a) => a !== '--direct');
  const [dir, countText, othersText = '50'] = args;
  const count = Number(countText);
  const others = Number(othersText);
  if (!dir || !Number.isSafeInteger(count) || count <= 0 || !Number.isSafeInteger(others) || others <= 0) {
    process.stderr.write('usage: build-store.ts <data-dir> <messages> [<other inboxes>] [--direct]\n');
    process.exit(64);
  }
  const t0 = Date.now();
  const progress = (done: number): void => {
    if (done % PROGRESS_EVERY === 0) process.stderr.write(`  ${done} / ${count} stored (${((Date.now() - t0) / 1000).toFixed(0)} s)\n`);
  };
  if (process.argv.includes('--direct')) await direct(dir, count, others, progress);
  else await viaStore(dir, count, others, progress);
  process.stdout.write(JSON.stringify({ messages: count, seconds: (Date.now() - t0) / 1000 }) + '\n');
}

main().catch((e: unknown) => {
  process.stderr.write(`build-store failed: ${e instanceof Error ? e.stack : String(e)}\n`);
  process.exit(1);
});
