// The index's files on open and at a clean close, for the Maildir store facade (store.ts):
// the packed index (packedIndex.ts) with the journal lines written after it, or the whole
// journal (journal.ts) when there is no usable packed index; the index snapshot (snapshot.ts)
// that lets trusted inboxes skip their listing; and the reconciliation with the files
// (recovery.ts scanInboxes) for every other inbox.
import { promises as fs } from 'node:fs';
import type { StoreLog } from '../types';
import type { Journal } from './journal';
import type { MessageIndex } from './memoryIndex';
import { scanInboxes } from './recovery';
import type { IndexRecord } from './ordered';
import { loadPackedIndex, markJournal, type PackedTable, writePackedIndex } from './packedIndex';
import { inboxKeyOf, loadSnapshot, trustedInboxes, writeSnapshot } from './snapshot';

export interface LoadedIndex {
  /** Highest message counter seen (journal, packed index and files). */
  maxCounter: number;
  /** Messages indexed from their headers (files the index files did not know). */
  parsed: number;
  /** Known messages whose files are gone. */
  stale: number;
  badLines: number;
  /** Inboxes (`<domain>\n<inbox>`) taken from the index snapshot without a listing. */
  trusted: Set<string>;
  /** An index snapshot was read (trusted or not). */
  snapshotRead: boolean;
  /** Trusted inboxes whose files were all private at the close that wrote the snapshot: their folders need no walk. */
  privateInboxes: Set<string>;
  /** Messages taken from the packed index, when one was used. */
  packed?: number;
}

/** Fills the (empty) index on open. */
export async function loadIndex(dir: string, index: MessageIndex, journal: Journal, log: StoreLog): Promise<LoadedIndex> {
  const table = await usablePackedIndex(dir, journal.file, log);
  const state = table ? await journal.load(table.journal.bytes, table.journal.lines) : await journal.load();
  if (state.badLines > 0) log('warn', `store: skipped ${state.badLines} damaged line(s) of the index journal ${journal.file}`);

  // Packed slots removed by the journal lines after it.
  const deadSlots = new Uint8Array(table?.count ?? 0);
  if (table) {
    for (const id of state.removed) {
      const slot = slotOf(table, id);
      if (slot >= 0) deadSlots[slot] = 1;
    }
    // A line after the packed index that adds one of its messages again adds nothing.
    for (const id of [...state.entries.keys()]) if (slotOf(table, id) >= 0) state.entries.delete(id);
  }

  // Live entries per inbox, for the snapshot's rule that the index holds what it counted.
  const counts = new Map<string, number>();
  if (table) {
    const perPair = new Map<number, number>();
    const n = table.strings.length;
    for (let s = 0; s < table.count; s++) {
      if (deadSlots[s] === 1) continue;
      const pair = table.domain[s] * n + table.inbox[s];
      perPair.set(pair, (perPair.get(pair) ?? 0) + 1);
    }
    for (const [pair, c] of perPair) {
      const d = Math.floor(pair / n);
      counts.set(inboxKeyOf(table.strings[d], table.strings[pair - d * n]), c);
    }
  }
  // Journal records start dead; the scan revives those whose file is there, and those of the
  // inboxes the index snapshot vouches for.
  for (const r of state.entries.values()) {
    r.dead = true;
    const key = inboxKeyOf(r.meta.domain, r.meta.inbox);
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }

  const { snapshot, problem } = await loadSnapshot(dir);
  if (problem) log('warn', `store: not using the index snapshot (every inbox is listed): ${problem}`);
  const trusted = snapshot
    ? await trustedInboxes(
        dir,
        snapshot,
        [...snapshot.stamps.keys()].map((k) => {
          const [domain, inbox] = k.split('\n');
          return { domain, inbox };
        }),
        counts,
      )
    : new Set<string>();

  // What the scan reconciles with the files: the journal's records, and the packed records of
  // the inboxes it lists (as objects, only for those).
  const known = state.entries;
  const packedKnown: IndexRecord[] = [];
  if (table) {
    const pairTrusted = new Map<number, boolean>();
    const n = table.strings.length;
    for (let s = 0; s < table.count; s++) {
      if (deadSlots[s] === 1) continue;
      const pair = table.domain[s] * n + table.inbox[s];
      let isTrusted = pairTrusted.get(pair);
      if (isTrusted === undefined) pairTrusted.set(pair, (isTrusted = trusted.has(inboxKeyOf(table.strings[table.domain[s]], table.strings[table.inbox[s]]))));
      if (!isTrusted) {
        const r: IndexRecord = { meta: table.meta(s), seconds: table.seconds[s], counter: table.counter[s], dead: true, slot: s };
        if (!known.has(r.meta.id)) {
          known.set(r.meta.id, r);
          packedKnown.push(r);
        }
      }
    }
  }
  const scan = await scanInboxes(dir, log, known, () => Promise.resolve(trusted));
  let stale = 0;
  for (const r of packedKnown) {
    if (!r.dead) continue;
    deadSlots[r.slot!] = 1;
    stale++;
  }
  if (table) index.fillPacked(table, deadSlots);
  // Journal order is receipt order up to commit interleaving, so inserts are (nearly) appends.
  for (const r of state.entries.values()) {
    if (r.slot !== undefined) continue;
    if (r.dead) stale++;
    else index.insert(r);
  }
  for (const r of scan.parsedRecs) {
    if (index.record(r.meta.id)) {
      log('warn', `store: skipping a file of message ${r.meta.id}: the id is already stored elsewhere`);
      continue;
    }
    index.insert(r);
  }
  index.changes = 0;
  if (table && (stale > 0 || scan.parsedRecs.length > 0 || state.entries.size > 0 || state.removed.length > 0)) index.changes = 1;
  return {
    maxCounter: Math.max(state.maxCounter, table?.maxCounter ?? 0, scan.maxCounter),
    parsed: scan.parsedRecs.length,
    stale,
    badLines: state.badLines,
    trusted: scan.trusted,
    snapshotRead: snapshot !== undefined,
    privateInboxes: new Set([...scan.trusted].filter((k) => snapshot?.stamps.get(k)?.private === true)),
    ...(table ? { packed: index.size } : {}),
  };
}

/** The packed index when it describes the start of the journal as it is now; why not, logged. */
async function usablePackedIndex(dir: string, journalFile: string, log: StoreLog): Promise<PackedTable | undefined> {
  const { table, problem } = await loadPackedIndex(dir);
  if (problem) log('warn', `store: not using the packed index (the whole index journal is read): ${problem}`);
  if (!table) return undefined;
  const now = await markJournal(journalFile, table.journal.bytes, table.journal.lines);
  if (!now || now.hash !== table.journal.hash) {
    log('info', 'store: the packed index describes an older index journal (compacted or replaced since); the whole journal is read');
    return undefined;
  }
  return table;
}

function slotOf(table: PackedTable, id: string): number {
  const b = id.lastIndexOf('-');
  const a = id.lastIndexOf('-', b - 1);
  if (a <= 0) return -1;
  return table.find(id, Number(id.slice(a + 1, b)), Number(id.slice(b + 1)));
}

/**
 * At a clean close, once the journal is flushed and closed: the packed index of the journal as
 * it is now (unless the index is still the packed index it was opened with and the journal
 * unchanged), then the index snapshot. A failure only costs the next start some work.
 */
export async function saveIndex(dir: string, index: MessageIndex, journal: Journal, maxCounter: number, privateInboxes: ReadonlySet<string>, log: StoreLog): Promise<void> {
  try {
    const mark = await markJournal(journal.file, await journalBytes(journal.file), journal.lineCount);
    const unchanged = index.unchangedPacked;
    if (mark && (!unchanged || unchanged.journal.bytes !== mark.bytes || unchanged.journal.hash !== mark.hash)) {
      await writePackedIndex(dir, index.liveMetas(), index.size, maxCounter, mark);
    }
  } catch (e) {
    log('warn', `store: could not write the packed index (the next start reads the whole index journal): ${(e as Error).message}`);
  }
  await writeSnapshot(dir, journal.file, index.inboxes(undefined), privateInboxes).catch((e: unknown) =>
    log('warn', `store: could not write the index snapshot (the next start lists every inbox): ${(e as Error).message}`),
  );
}

async function journalBytes(file: string): Promise<number> {
  try {
    return (await fs.stat(file)).size;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return 0;
    throw e;
  }
}
