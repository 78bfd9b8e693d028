// Recovery of the Maildir store on open: the write-ahead log's replay (what a crash left in the
// log but not in the files is written again, then the log starts afresh) and the scan that
// reconciles the index journal with a readdir of every inbox (files the journal does not know are
// indexed from their headers; leftovers in tmp/, never acknowledged, are removed).
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { decodeFileName } from '../../../core/fileNames';
import { ALL_INBOXES, domainProblem, inboxNameProblem, isPhoneInbox, parseMessageId } from '../../../core/ids';
import { detectCode } from '../code';
import { errnoCode } from '../errors';
import { parseIndexedHeaders } from '../headers';
import type { MessageMeta, StoreLog } from '../types';
import { flushFiles, namesOrEmpty, OPEN_CONCURRENCY, readdirOrEmpty, writeWithTime } from './fileOps';
import type { MaildirFiles } from './files';
import { mailRoot, mapLimit } from './layout';
import type { IndexRecord } from './ordered';
import { inboxKeyOf } from './snapshot';
import type { WalMessage } from './wal';
import { retryBusy } from '../../../shared/portableFs';

/** Answers the inboxes (`<domain>\n<inbox>`) whose journal entries are taken without listing their files. */
type TrustInboxes = (inboxes: Array<{ domain: string; inbox: string }>) => Promise<Set<string>>;

function recordOf(meta: MessageMeta): IndexRecord | undefined {
  const p = parseMessageId(meta.id);
  return p && { meta, seconds: p.seconds, counter: p.counter, dead: false };
}

/** Rewrites what the log holds but the files lost (a crash before the checkpoint), flushes it, and starts a fresh log. */
export async function replayLog(files: MaildirFiles, log: StoreLog): Promise<void> {
  const rec = await files.wal.recover();
  for (const f of rec.tornFiles) log('warn', `store: ${f} ends in an incomplete record (a delivery cut off before it was acknowledged); the rest is replayed`);
  let restored = 0;
  const logged: string[] = [];
  const todo: WalMessage[] = [];
  for (const m of rec.messages.values()) {
    const problem = domainProblem(m.domain) ?? inboxNameProblem(m.inbox);
    const parsed = parseMessageId(m.id);
    if (problem || !parsed || parsed.inbox !== m.inbox) {
      log('warn', `store: skipping a logged message ${JSON.stringify(m.id)}: ${problem ?? 'bad id'}`);
      continue;
    }
    logged.push(files.pathOf(m, 'new'));
    todo.push(m);
  }
  // Written a bounded number at once, and made durable together below (before the log goes).
  await mapLimit(todo, OPEN_CONCURRENCY, async (m) => {
    if (await restore(files, m, files.pathOf(m, 'new'))) restored++;
  });
  if (rec.files.length > 0) {
    await flushFiles(logged);
    for (const f of rec.files) await retryBusy(() => fs.rm(f, { force: true }));
  }
  if (restored > 0) log('warn', `store: restored ${restored} acknowledged message(s) from the write-ahead log`);
  await files.wal.start(rec.lastGeneration + 1);
}

async function restore(files: MaildirFiles, m: WalMessage, file: string): Promise<boolean> {
  try {
    if ((await fs.readFile(file)).equals(m.raw)) return false;
  } catch (e) {
    if (errnoCode(e) !== 'ENOENT') throw e;
  }
  await files.ensureInboxDir(m.domain, m.inbox);
  const tmp = files.pathOf(m, 'tmp');
  await retryBusy(() => fs.rm(tmp, { force: true }));
  await writeWithTime(tmp, m.raw, m.time);
  await retryBusy(() => fs.rename(tmp, file));
  return true;
}

/**
 * Reconciles the journal's records with the directories: a journal record whose file is
 * there is revived (`dead = false`), a file the journal does not know is indexed from its
 * headers (returned in `parsedRecs`). Leftovers in tmp/ (never acknowledged) are removed.
 */
export async function scanInboxes(dataDir: string, log: StoreLog, journal: Map<string, IndexRecord>, trust?: TrustInboxes): Promise<{ parsedRecs: IndexRecord[]; maxCounter: number; trusted: Set<string> }> {
  const unknown: Array<{ domain: string; inbox: string; id: string; file: string }> = [];
  const inboxDirs: Array<{ domain: string; inbox: string; dir: string }> = [];

  const root = mailRoot(dataDir);
  for (const dent of await readdirOrEmpty(root)) {
    const domain = decodeFileName(dent.name);
    if (!dent.isDirectory() || domain === undefined || domain !== domain.toLowerCase() || domainProblem(domain)) {
      log('warn', `store: skipping ${path.join(root, dent.name)}: not a domain directory`);
      continue;
    }
    for (const idir of await readdirOrEmpty(path.join(root, dent.name))) {
      const inbox = decodeFileName(idir.name);
      // Stored names are lowercase and trimmed; a `+<digits>` folder an older release wrote is still read.
      if (!idir.isDirectory() || inbox === undefined || inbox === ALL_INBOXES || inbox !== inbox.toLowerCase() || inbox !== inbox.trim() || inboxNameProblem(inbox)) {
        log('warn', `store: skipping ${path.join(root, dent.name, idir.name)}: not an inbox directory`);
        continue;
      }
      inboxDirs.push({ domain, inbox, dir: path.join(root, dent.name, idir.name) });
    }
  }

  // Inboxes the index snapshot vouches for (snapshot.ts) keep their journal entries unlisted.
  const trusted = trust ? await trust(inboxDirs) : new Set<string>();
  if (trusted.size > 0) {
    // By domain, then inbox: no key string built per entry of a million-entry journal.
    const byDomain = new Map<string, Set<string>>();
    for (const key of trusted) {
      const [domain, inbox] = key.split('\n');
      let set = byDomain.get(domain);
      if (!set) byDomain.set(domain, (set = new Set()));
      set.add(inbox);
    }
    for (const r of journal.values()) if (byDomain.get(r.meta.domain)?.has(r.meta.inbox)) r.dead = false;
  }
  await mapLimit(inboxDirs, OPEN_CONCURRENCY, async ({ domain, inbox, dir }) => {
    if (trusted.has(inboxKeyOf(domain, inbox))) return;
    let files: string[];
    try {
      // Files left in tmp/ were never acknowledged: remove them. Not through a symlink: what it
      // points to is not the store's.
      const tmpDir = path.join(dir, 'tmp');
      if (!(await fs.lstat(tmpDir).catch(() => undefined))?.isSymbolicLink()) {
        for (const t of await namesOrEmpty(tmpDir)) await retryBusy(() => fs.rm(path.join(tmpDir, t), { force: true })).catch(() => undefined);
      }
      // Names only (no file types): 100,000 Dirent objects cost more than the whole index. A
      // directory named like a message fails when it is read, which skips it with a warning.
      files = await namesOrEmpty(path.join(dir, 'new'));
    } catch (e) {
      log('warn', `store: skipping ${dir}: ${(e as Error).message}`);
      return;
    }
    for (const name of files) {
      const id = name.endsWith('.eml') ? decodeFileName(name.slice(0, -4)) : undefined;
      const known = id === undefined ? undefined : journal.get(id);
      if (known && known.meta.domain === domain && known.meta.inbox === inbox) {
        known.dead = false;
        continue;
      }
      const file = path.join(dir, 'new', name);
      if (id === undefined || parseMessageId(id)?.inbox !== inbox) {
        log('warn', `store: skipping ${file}: not a message file of this store`);
        continue;
      }
      unknown.push({ domain, inbox, id, file });
    }
  });

  const seen = new Set<string>();
  const toParse = unknown.filter((u) => {
    if (journal.get(u.id)?.dead === false || seen.has(u.id)) {
      log('warn', `store: skipping ${u.file}: message id ${u.id} is already stored elsewhere`);
      return false;
    }
    seen.add(u.id);
    return true;
  });
  let maxCounter = 0;
  const parsedRecs: IndexRecord[] = [];
  await mapLimit(toParse, OPEN_CONCURRENCY, async ({ domain, inbox, id, file }) => {
    try {
      const [raw, st] = await Promise.all([fs.readFile(file), fs.stat(file)]);
      const headers = parseIndexedHeaders(raw);
      if (!headers) {
        log('warn', `store: skipping ${file}: no RFC 5322 header block`);
        return;
      }
      const p = parseMessageId(id);
      if (!p) return;
      maxCounter = Math.max(maxCounter, p.counter);
      // The file was written at receipt; keep its time within the id's second.
      const time = Math.min(Math.max(Math.round(st.mtimeMs), p.seconds * 1000), p.seconds * 1000 + 999);
      const code = await detectCode(raw, isPhoneInbox(inbox));
      const rec = recordOf({ id, domain, inbox, time, from: headers.from, subject: headers.subject, size: raw.length, source: 'smtp', ...(code ? { code } : {}) });
      if (rec) parsedRecs.push(rec);
    } catch (e) {
      log('warn', `store: skipping ${file}: ${(e as Error).message}`);
    }
  });
  return { parsedRecs, maxCounter, trusted };
}
