// Typed errors of the message store. Branch on `code`, never on `message`.
import { codedError, type CodedError } from '../../core/errors';

type StoreErrorCode =
  /** A target domain or inbox name is not acceptable. */
  | 'bad_target'
  /** A list cursor is not a message id. */
  | 'bad_cursor'
  /** No such message. */
  | 'not_found'
  /** The store is not open (or already closed). */
  | 'not_open'
  /** The file system refused a write, read or sync. */
  | 'io'
  /** The disk of the data dir is full (ENOSPC, EDQUOT): nothing was stored; reads still work. */
  | 'full'
  /** Another server (or store) uses the data dir. */
  | 'locked'
  /** The data dir or a folder in it cannot be trusted: another user's, writable by others, or a symbolic link. */
  | 'unsafe'
  /** The PostgreSQL store's database cannot be reached now (down, restarting, network): retry later. */
  | 'db_unreachable'
  /** The PostgreSQL store's database refused the login (a wrong user or password). */
  | 'db_auth'
  /** A message with this caller's key (MessageKey) is stored already: nothing was stored. */
  | 'duplicate_key';

export const StoreError = codedError<StoreErrorCode>('StoreError');
export type StoreError = CodedError<StoreErrorCode>;

/** The `code` of a Node file-system error (ENOENT, ENOSPC, …), if it has one. */
export function errnoCode(e: unknown): string | undefined {
  return (e as NodeJS.ErrnoException | undefined)?.code;
}

/** Errors of a file system with no room left (or the user's quota spent). */
const NO_SPACE = new Set(['ENOSPC', 'EDQUOT']);

/** A full disk: the file system's ENOSPC/EDQUOT, or a store's own FULL. */
export function isNoSpace(e: unknown): boolean {
  return NO_SPACE.has(errnoCode(e) ?? '') || StoreError.is(e, 'full');
}
