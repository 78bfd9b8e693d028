// The store a server runs on, chosen once: the team server's PostgreSQL store given a database
// URL, else the Maildir store in the data folder. What the server wires from it beyond the Store
// interface comes back with it, typed and optional, so the server never asks which concrete store
// it holds (no `instanceof`). The store is built here, not opened: the server opens it (store.open())
// once its fault rules are wired, and closes its worker pools if that fails.
import type { Durability } from '../shared/contract';
import type { FileWriter } from './store/maildir/fileWrites';
import { MaildirStore } from './store/maildir/store';
import type { CodeDetector } from './store/incoming';
import type { PostgresSpentIds } from './store/postgres/spentIds';
import { PostgresStore } from './store/postgres/store';
import type { SharedChaosRules } from './store/sharedChaos';
import type { RetentionOptions, Store, StoreLog } from './store/types';

export interface StoreOptions {
  /** The team server's database (`postgres://…`): the PostgreSQL store. Without it, the Maildir store in `dataDir`. */
  databaseUrl?: string;
  /** The data folder, resolved: the Maildir store's root. */
  dataDir: string;
  retention?: Partial<RetentionOptions>;
  log: StoreLog;
  /** PostgreSQL: how often the age and count sweep runs. */
  sweepIntervalMs?: number;
  /** Maildir: what an acknowledgement waits for. */
  durability: Durability;
  /** Maildir: reads the code of a message after its acknowledgement (the server's worker threads). */
  detectCode: CodeDetector;
  /** Maildir: runs the message files' writes (the server's file-writing thread). */
  writeFile?: FileWriter;
}

/** The store and what else the server takes from it; a part a store lacks is absent. */
export interface ServerStore {
  store: Store;
  /** Where SMTP and the provider routes spool a large body (Maildir: on the data folder's file system, so a spool file links into place). */
  spoolDir?: string;
  /** The web UI's signed-out sessions and used tickets, shared by every process of a team server. */
  uiRevocations?: PostgresSpentIds;
  /** The fault rules every process of a team server shares. */
  sharedChaos?: SharedChaosRules;
  /** Where the messages are, for the start line: the database (password hidden) or the data folder. */
  where: string;
}

export function createStore(o: StoreOptions): ServerStore {
  if (o.databaseUrl !== undefined) {
    const team = new PostgresStore({ url: o.databaseUrl, retention: o.retention, log: o.log, sweepIntervalMs: o.sweepIntervalMs });
    return { store: team, uiRevocations: team.spentIds, sharedChaos: team.chaosRules, where: team.where };
  }
  const store = new MaildirStore({
    dir: o.dataDir,
    retention: o.retention,
    log: o.log,
    durability: o.durability,
    detectCode: o.detectCode,
    ...(o.writeFile ? { writeFile: o.writeFile } : {}),
  });
  return { store, spoolDir: store.spoolDir, where: o.dataDir };
}
