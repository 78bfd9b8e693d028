// The fixture data dirs of the list and start-up benchmarks: 100,000 messages (the default)
// or a million (`--store 1m`). Built once with the
// store's own API in a child process (bench/build-store.ts: the same durable writes and
// index journal as the server's), checked by starting the real server on it, cached outside
// the repository keyed by the store's source (its on-disk format), and handed to each run
// as a copy with the message files hard-linked, so a run can never damage the cache.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, linkSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { benchCacheDir } from './maildev';
import { PRODUCT_ROOT, startOurs } from './ours';
import { DEFAULT_DOMAIN } from '../../src/shared/contract';

/** The inbox the list benchmark reads: half of the store. */
export const BIG_INBOX = 'big';

/** A fixture store: half its messages in the big inbox, the other half in inboxes of 1,000 each. */
export interface StoreSpec {
  /** `100k` or `1m`, as given to `--store`. */
  name: string;
  messages: number;
  bigInboxMessages: number;
  /** Inboxes holding the other half (1,000 messages each). */
  otherInboxes: number;
  /** Written file by file without the store's fsyncs (build-store.ts --direct): a million durable adds take over an hour here. */
  direct?: boolean;
}

export const STORE_SPECS: Record<string, StoreSpec> = {
  '100k': { name: '100k', messages: 100_000, bigInboxMessages: 50_000, otherInboxes: 50 },
  '1m': { name: '1m', messages: 1_000_000, bigInboxMessages: 500_000, otherInboxes: 500, direct: true },
};
export const DEFAULT_STORE_SPEC = STORE_SPECS['100k'];
/** Domain of every address (the server's default domain). */
const DOMAIN = DEFAULT_DOMAIN;
/** Size of each stored message, as in the SMTP benchmark. */
export const FIXTURE_MESSAGE_BYTES = 4096;
/** Threads for the builder's fsyncs (building speed only; not a figure). */
const BUILD_THREADPOOL = '16';
/** Bumped when this builder changes what it stores. */
const FIXTURE_VERSION = 2;

export interface PreparedStore {
  /** A fresh copy of the cached store for this run (delete it afterwards). */
  dir: string;
  info: { key: string; cached: boolean; buildSeconds?: number; messages: number };
}

/** Recipient of message i: every other message into the big inbox. */
export function fixtureRecipient(i: number, otherInboxes: number): string {
  return i % 2 === 0 ? `${BIG_INBOX}@${DOMAIN}` : `user${Math.floor(i / 2) % otherInboxes}@${DOMAIN}`;
}

/** Key of the on-disk format: the store's source files and this builder's version. */
export function storeKey(spec: StoreSpec = DEFAULT_STORE_SPEC): string {
  const h = createHash('sha256');
  // The 100k key is what it was before sizes existed, so its cache stays valid.
  h.update(`fixture ${FIXTURE_VERSION} ${spec.messages} ${FIXTURE_MESSAGE_BYTES}\n`);
  if (spec.otherInboxes !== 50) h.update(`other inboxes ${spec.otherInboxes}${spec.direct ? ' direct' : ''}\n`);
  // The measured build's store (this checkout's, or the --against ref's), sub-folders included.
  const storeDir = path.join(PRODUCT_ROOT, 'src', 'server', 'store');
  const files = existsSync(storeDir)
    ? (readdirSync(storeDir, { recursive: true }) as string[]).filter((f) => f.endsWith('.ts')).map((f) => f.split(path.sep).join('/')).sort()
    : [];
  for (const f of files) {
    h.update(`${f}\n`);
    h.update(readFileSync(path.join(storeDir, f)));
  }
  return h.digest('hex').slice(0, 16);
}

/**
 * Messages the server had to index from their headers on open (its index journal did not
 * cover them), read from its start-up log line; 0 when the journal covered everything.
 */
export function indexedFromHeaders(stderr: string): number {
  const m = /\((\d+) indexed from their headers\)/.exec(stderr);
  return m ? Number(m[1]) : 0;
}

/** Marks the cached store stale, so the next run rebuilds it. */
export function invalidateStore(spec: StoreSpec = DEFAULT_STORE_SPEC): void {
  rmSync(path.join(benchCacheDir(), 'stores', `store-${storeKey(spec)}`, 'complete.json'), { force: true });
}

async function build(spec: StoreSpec, dataDir: string, keepAll: string[], log: (l: string) => void): Promise<void> {
  const script = path.join(PRODUCT_ROOT, 'bench', 'build-store.ts');
  await new Promise<void>((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', script, dataDir, String(spec.messages), String(spec.otherInboxes), ...(spec.direct ? ['--direct'] : [])], {
      cwd: PRODUCT_ROOT,
      env: { ...process.env, UV_THREADPOOL_SIZE: BUILD_THREADPOOL },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let tail = '';
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (c: string) => {
      tail = (tail + c).slice(-4000);
      for (const line of c.split('\n')) if (line.includes('stored (')) log(line.trim());
    });
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`build-store exited with ${code}: ${tail.trim()}`))));
  });
  // The real server must see every message (and keep them all with these retention switches).
  const ours = await startOurs({ dataDir, args: keepAll });
  try {
    const res = await fetch(`${ours.ready.http}/api/v2/domains`, { headers: { authorization: ours.apiToken } });
    const body = (await res.json()) as { domains?: Array<{ messages: number }> };
    const total = (body.domains ?? []).reduce((a, d) => a + d.messages, 0);
    if (total !== spec.messages) throw new Error(`the server sees ${total} messages in the built store, not ${spec.messages}`);
  } finally {
    await ours.stop();
  }
}

/** The cached store (built when missing) copied for one run. */
export async function prepareStore(log: (l: string) => void, keepAll: string[], spec: StoreSpec = DEFAULT_STORE_SPEC): Promise<PreparedStore> {
  const key = storeKey(spec);
  const root = path.join(benchCacheDir(), 'stores');
  const cacheDir = path.join(root, `store-${key}`);
  const data = path.join(cacheDir, 'data');
  const marker = path.join(cacheDir, 'complete.json');
  let cached = true;
  let buildSeconds: number | undefined;
  if (!existsSync(marker)) {
    cached = false;
    // One store per size is kept: older formats of this size are removed.
    if (existsSync(root)) for (const d of readdirSync(root)) if (sizeOf(path.join(root, d)) === spec.messages) rmSync(path.join(root, d), { recursive: true, force: true });
    const building = `${cacheDir}.building`;
    mkdirSync(path.join(building, 'data'), { recursive: true });
    writeFileSync(path.join(building, 'size.json'), JSON.stringify({ messages: spec.messages }) + '\n');
    log(`building the ${spec.messages.toLocaleString('en-US')}-message store with the store API into ${building} (cached for later runs)`);
    const t0 = Date.now();
    await build(spec, path.join(building, 'data'), keepAll, log);
    buildSeconds = (Date.now() - t0) / 1000;
    writeFileSync(path.join(building, 'complete.json'), JSON.stringify({ key, messages: spec.messages, builtAt: new Date().toISOString(), buildSeconds }) + '\n');
    renameSync(building, cacheDir);
  }
  const dir = mkdtempSync(path.join(os.tmpdir(), 'test-inbox-bench-store-'));
  copyStore(data, dir);
  return { dir, info: { key, cached, buildSeconds, messages: spec.messages } };
}

/** Messages of a cached store folder (its size.json, or its complete.json; stores from before sizes are 100k). */
function sizeOf(dir: string): number {
  for (const f of ['size.json', 'complete.json']) {
    try {
      const n = (JSON.parse(readFileSync(path.join(dir, f), 'utf8')) as { messages?: unknown }).messages;
      if (typeof n === 'number') return n;
    } catch {
      // absent or damaged: try the next
    }
  }
  return DEFAULT_STORE_SPEC.messages;
}

/**
 * Copies a data dir: message files (immutable in Maildir, under `new/` or `cur/`) as hard
 * links, everything else (indexes, journals, token files that a server may append to in
 * place) as real copies, so the cached original never changes.
 */
export function copyStore(from: string, to: string): void {
  mkdirSync(to, { recursive: true });
  for (const e of readdirSync(from, { withFileTypes: true })) {
    const src = path.join(from, e.name);
    const dst = path.join(to, e.name);
    if (e.isDirectory()) copyStore(src, dst);
    else if (e.isFile()) {
      const parent = path.basename(from);
      if (parent === 'new' || parent === 'cur') {
        try {
          linkSync(src, dst);
          continue;
        } catch {
          // Another file system or no hard links: copy instead.
        }
      }
      copyFileSync(src, dst);
    }
  }
}
