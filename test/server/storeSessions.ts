// Maildir stores opened and closed again by one suite (the index snapshot and packed index
// suites reopen a store many times): each opened with no retention and no timed checkpoint,
// its log kept; close() waits out the snapshot's racy window first; closeAll() after each test.
import { RACY_NS } from '../../src/server/store/maildir/snapshot';
import { MaildirStore } from '../../src/server/store/maildir/store';

/** Past the snapshot's racy window, so a folder's ctime is older than the snapshot (snapshot.ts). */
export const SETTLE_MS = Number(RACY_NS / 1_000_000n) * 2;

export function storeSessions(dir: () => string): {
  openStore(): Promise<{ store: MaildirStore; logs: string[] }>;
  close(store: MaildirStore): Promise<void>;
  closeAll(): Promise<void>;
} {
  const open: MaildirStore[] = [];
  return {
    async openStore() {
      const logs: string[] = [];
      const store = new MaildirStore({ dir: dir(), retention: { maxMessages: 0, maxAgeMs: 0 }, checkpointIntervalMs: 0, log: (level, msg) => logs.push(`${level} ${msg}`) });
      await store.open();
      open.push(store);
      return { store, logs };
    },
    async close(store) {
      await new Promise((r) => setTimeout(r, SETTLE_MS));
      await store.close();
      open.splice(open.indexOf(store), 1);
    },
    async closeAll() {
      for (const s of open.splice(0)) await s.close();
    },
  };
}
