// Typed errors of the message store. Branch on `code`, never on `message`.

type StoreErrorCode =
  /** A target domain or inbox name is not acceptable. */
  | 'BAD_TARGET'
  /** A list cursor is not a message id. */
  | 'BAD_CURSOR'
  /** No such message. */
  | 'NOT_FOUND'
  /** The store is not open (or already closed). */
  | 'NOT_OPEN'
  /** The file system refused a write, read or sync. */
  | 'IO'
  /** The disk of the data dir is full (ENOSPC, EDQUOT): nothing was stored; reads still work. */
  | 'FULL'
  /** Another server (or store) uses the data dir. */
  | 'LOCKED'
  /** The data dir or a folder in it cannot be trusted: another user's, writable by others, or a symbolic link. */
  | 'UNSAFE'
  /** The PostgreSQL store's database cannot be reached now (down, restarting, network): retry later. */
  | 'DB_UNREACHABLE'
  /** The PostgreSQL store's database refused the login (a wrong user or password). */
  | 'DB_AUTH'
  /** A message with this caller's key (MessageKey) is stored already: nothing was stored. */
  | 'DUPLICATE_KEY';

export class StoreError extends Error {
  readonly code: StoreErrorCode;
  constructor(code: StoreErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.name = 'StoreError';
  }

  static is(e: unknown, code?: StoreErrorCode): e is StoreError {
    return e instanceof StoreError && (code === undefined || e.code === code);
  }
}

/** The `code` of a Node file-system error (ENOENT, ENOSPC, …), if it has one. */
export function errnoCode(e: unknown): string | undefined {
  return (e as NodeJS.ErrnoException | undefined)?.code;
}

/** Errors of a file system with no room left (or the user's quota spent). */
const NO_SPACE = new Set(['ENOSPC', 'EDQUOT']);

/** A full disk: the file system's ENOSPC/EDQUOT, or a store's own FULL. */
export function isNoSpace(e: unknown): boolean {
  return NO_SPACE.has(errnoCode(e) ?? '') || StoreError.is(e, 'FULL');
}
