// The materialiser's file operations (files.ts writeJob): a message's file written to tmp/ and
// renamed into new/, or a further recipient's hard link of it. Synchronous, a batch at a time,
// with results as plain data, so the server runs them on a worker thread of its own (server.ts,
// workers/pool.ts): there a batch costs one message to the thread instead of four thread-pool
// hops and their promises per file, about 40 % of the server's CPU per message, and a write that
// waits behind the log's fdatasync holds no event loop. Without a worker they run in the caller.
import { closeSync, constants as fsConstants, linkSync, lstatSync, openSync, renameSync, writeSync } from 'node:fs';
import { PRIVATE_FILE_MODE } from '../../../shared/privateFile';
import { errnoCode } from '../errors';
import { retryBusySync } from '../../../shared/portableFs';

/** Open flags of a message file rewritten in tmp/: created or truncated, and never through a symlink in its place (ELOOP). */
const WRITE_NOFOLLOW = fsConstants.O_WRONLY | fsConstants.O_CREAT | fsConstants.O_TRUNC | (fsConstants.O_NOFOLLOW ?? 0);

/** Write `raw` to `tmp` (0600, replacing a leftover of a failed try) and rename it to `final`; or link `from` as `final`. */
export type FileWrite = { tmp: string; final: string; raw: Uint8Array } | { from: string; final: string };

/** Undefined when done; else the error, as plain data (its errno code kept). */
export type FileWriteResult = { code?: string; message: string } | undefined;

/** Runs one operation (the worker sends several in one message; see workers/pool.ts). */
export type FileWriter = (op: FileWrite) => Promise<FileWriteResult>;

export function writeFilesSync(ops: readonly FileWrite[]): FileWriteResult[] {
  return ops.map((op) => {
    try {
      if ('from' in op) {
        linkSync(op.from, op.final);
        return undefined;
      }
      // Windows has no O_NOFOLLOW (and junctions): a link in the tmp/ name's place is refused as
      // O_NOFOLLOW refuses it elsewhere (ELOOP), by its lstat just before the open.
      if (fsConstants.O_NOFOLLOW === undefined && lstatSync(op.tmp, { throwIfNoEntry: false })?.isSymbolicLink()) {
        return { code: 'ELOOP', message: `ELOOP: ${op.tmp} is a symbolic link; no file is written through one` };
      }
      const fd = openSync(op.tmp, WRITE_NOFOLLOW, PRIVATE_FILE_MODE);
      try {
        for (let at = 0; at < op.raw.byteLength; ) at += writeSync(fd, op.raw, at);
      } finally {
        closeSync(fd);
      }
      // On its own thread, so a busy target's waits (Windows) hold no event loop.
      retryBusySync(() => renameSync(op.tmp, op.final));
      return undefined;
    } catch (e) {
      const code = errnoCode(e);
      return { ...(code !== undefined ? { code } : {}), message: (e as Error).message };
    }
  });
}

/** The calling thread's writer: the default, and where a worker cannot answer. */
export const writeFileHere: FileWriter = (op) => Promise.resolve(writeFilesSync([op])[0]);

/** A result's error again, with its errno code, for the materialiser's retry and its log line. */
export function fileWriteError(r: NonNullable<FileWriteResult>): Error {
  return Object.assign(new Error(r.message), r.code !== undefined ? { code: r.code } : {});
}
