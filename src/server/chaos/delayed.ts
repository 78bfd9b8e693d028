// The `delivery` surface of the fault rules (docs/chaos.md): a message accepted now becomes
// visible only when its delay ends. Each intake (SMTP, the provider APIs, Twilio's Messages API
// and Verify) asks `hold` once per message, just before it would store it; with no rule it
// answers at once. A held message is made durable in `<data>/.delayed/` before the intake
// acknowledges it, and handed to the store when its delay ends, so its received time is the
// moment it becomes visible (lists, push events, `wait=` and every `since` see it then). A
// restart finds the held messages and goes on waiting for what is left of each delay.
//
// On disk, per held message: `<id>.eml` (its bytes), then `<id>.json` (its targets, source,
// parts, key and due time), each written whole and fsynced, then the folder fsynced: the JSON is
// the commit, so a crash before it leaves only an `.eml`, removed at the next start (the intake
// had not acknowledged it). When the delay ends the message is stored under a message key
// (store/types.ts MessageKey: its own, a Twilio SID, or one per target made from the held id),
// then its JSON removed, then its `.eml`. A crash between the store's commit and the JSON's
// removal finds the key stored at the next start and only removes the files: it appears once.
import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { CODE_SCAN_MAX_BYTES } from '../store/code';
import type { FileBody, MessageBody, MessageKey, MessageParts, MessageSource, Store } from '../store/types';
import type { ChaosRules } from './rules';

/** The folder of held messages, beside the server's other files (never under `mail/`). */
export const DELAYED_DIR_NAME = '.delayed';
/** The scope of the message keys a held message without one of its own is stored under: no list reads it. */
const DELAYED_KEY_SCOPE = 'delayed';

type Target = { domain: string; inbox: string };

interface Held {
  targets: Target[];
  source: MessageSource;
  parts?: MessageParts;
  key?: MessageKey;
  /** When it becomes visible (ms since the epoch). */
  due: number;
}

type LogLevel = 'info' | 'warn' | 'error';

export interface DelayedDeliveriesOptions {
  /** The data folder: held messages live in its DELAYED_DIR_NAME. */
  dataDir: string;
  store: Store;
  rules: ChaosRules;
  now?: () => number;
  log?: (level: LogLevel, msg: string) => void;
}

async function writeDurably(file: string, data: Buffer | string): Promise<void> {
  const h = await fs.open(file, 'wx', 0o600);
  try {
    await h.writeFile(data);
    await h.sync();
  } finally {
    await h.close();
  }
}

async function syncDir(dir: string): Promise<void> {
  // Windows opens no directory to flush it (portableFs.ts fsyncOpenFlags): its renames are durable by then.
  if (process.platform === 'win32') return;
  const h = await fs.open(dir, 'r');
  try {
    await h.sync();
  } finally {
    await h.close();
  }
}

export class DelayedDeliveries {
  readonly #dir: string;
  readonly #store: Store;
  readonly #rules: ChaosRules;
  readonly #now: () => number;
  readonly #log: (level: LogLevel, msg: string) => void;
  readonly #timers = new Map<string, NodeJS.Timeout>();
  /** Deliveries running now: close() waits for them. */
  readonly #running = new Set<Promise<void>>();
  #closed = false;

  constructor(o: DelayedDeliveriesOptions) {
    this.#dir = path.join(o.dataDir, DELAYED_DIR_NAME);
    this.#store = o.store;
    this.#rules = o.rules;
    this.#now = o.now ?? Date.now;
    this.#log = o.log ?? (() => undefined);
  }

  /** Held messages waiting now. */
  get pending(): number {
    return this.#timers.size;
  }

  /** Finds the messages a previous run held and waits for what is left of each delay. */
  async open(): Promise<void> {
    let names: string[];
    try {
      names = await fs.readdir(this.#dir);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw e;
    }
    const ids = new Set(names.filter((n) => n.endsWith('.json')).map((n) => n.slice(0, -5)));
    for (const n of names) {
      // An .eml without its JSON was never acknowledged: its intake failed or the process died first.
      if (n.endsWith('.eml') && !ids.has(n.slice(0, -4))) await fs.rm(path.join(this.#dir, n), { force: true });
    }
    for (const id of ids) {
      try {
        const held = JSON.parse(await fs.readFile(path.join(this.#dir, `${id}.json`), 'utf8')) as Held;
        this.#schedule(id, held.due);
      } catch (e) {
        this.#log('warn', `delayed delivery ${id}: its record cannot be read (${(e as Error).message}); left in ${this.#dir}`);
      }
    }
    if (ids.size > 0) this.#log('info', `failures on demand: ${ids.size} delayed message${ids.size === 1 ? '' : 's'} waiting to become visible`);
  }

  /**
   * Whether a `delivery` rule holds this message back: then it is durable in the folder of held
   * messages when this resolves (the caller acknowledges it, and does not store it), and the
   * answer is when it becomes visible. Undefined: no rule fired, the caller stores it now.
   */
  async hold(targets: Target[], body: MessageBody, source: MessageSource, match: { sender?: string }, parts?: MessageParts, key?: MessageKey): Promise<number | undefined> {
    if (this.#rules.empty) return undefined;
    const fault = await this.#rules.evaluate('delivery', { ...match, recipients: targets.map((t) => `${t.inbox}@${t.domain}`) });
    if (!fault?.deliveryDelayMs) return undefined;
    const id = `${this.#now()}-${randomBytes(6).toString('hex')}`;
    const due = this.#now() + fault.deliveryDelayMs;
    // The folder's own entry is durable in the data folder before any record in it is.
    if ((await fs.mkdir(this.#dir, { recursive: true, mode: 0o700 })) !== undefined) await syncDir(path.dirname(this.#dir));
    const eml = path.join(this.#dir, `${id}.eml`);
    try {
      if (Buffer.isBuffer(body)) await writeDurably(eml, body);
      else {
        await fs.copyFile(body.file, eml);
        const h = await fs.open(eml, 'r+');
        try {
          await h.sync();
        } finally {
          await h.close();
        }
      }
      const held: Held = { targets, source, due, ...(parts ? { parts } : {}), ...(key ? { key } : {}) };
      await writeDurably(path.join(this.#dir, `${id}.json`), JSON.stringify(held));
      await syncDir(this.#dir);
    } catch (e) {
      await fs.rm(eml, { force: true });
      await fs.rm(path.join(this.#dir, `${id}.json`), { force: true });
      throw e;
    }
    this.#schedule(id, due);
    return due;
  }

  #schedule(id: string, due: number): void {
    if (this.#closed) return;
    const timer = setTimeout(
      () => {
        this.#timers.delete(id);
        const run = this.#deliver(id).catch((e: unknown) => this.#log('error', `delayed delivery ${id} failed: ${(e as Error).message}; it stays in ${this.#dir} and is tried again at the next start`));
        this.#running.add(run);
        void run.finally(() => this.#running.delete(run));
      },
      Math.max(0, due - this.#now()),
    );
    this.#timers.set(id, timer);
  }

  async #deliver(id: string): Promise<void> {
    const json = path.join(this.#dir, `${id}.json`);
    const eml = path.join(this.#dir, `${id}.eml`);
    const held = JSON.parse(await fs.readFile(json, 'utf8')) as Held;
    const size = (await fs.stat(eml)).size;
    const h = await fs.open(eml, 'r');
    let head: Buffer;
    try {
      const b = Buffer.alloc(Math.min(size, CODE_SCAN_MAX_BYTES));
      const { bytesRead } = await h.read(b, 0, b.length, 0);
      head = b.subarray(0, bytesRead);
    } finally {
      await h.close();
    }
    const body: FileBody = { file: eml, size, head };
    // A key names one message: a keyed one has one target; otherwise one key per target.
    const adds = held.key ? [{ targets: held.targets, key: held.key }] : held.targets.map((t, i) => ({ targets: [t], key: { key: `${DELAYED_KEY_SCOPE}/${id}/${i}`, scope: DELAYED_KEY_SCOPE, data: '' } }));
    for (const a of adds) if ((await this.#store.findByKey(a.key.key)) === undefined) await this.#store.add(a.targets, body, held.source, held.parts, a.key);
    await fs.rm(json, { force: true });
    await fs.rm(eml, { force: true });
  }

  /** Stops the timers (held messages stay on disk for the next start) and waits for deliveries under way. */
  async close(): Promise<void> {
    this.#closed = true;
    for (const t of this.#timers.values()) clearTimeout(t);
    this.#timers.clear();
    while (this.#running.size > 0) await Promise.allSettled([...this.#running]);
  }
}
