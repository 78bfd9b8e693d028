// Mailpit's read marks (`Read`, `is:read`, `PUT /api/v1/messages`, docs/compat.md). Neither
// store keeps a read state, so the marks live in this process's memory: they start empty
// (every message unread) when the server starts, and on a team server each process keeps its
// own. A message's mark goes with it when it is deleted here.
import type { MessageMeta, Store } from '../../store/types';

/** Marks held at most: past it the oldest marks are dropped (those messages read as unread again). */
const MAX_MARKS = 100_000;

export class ReadMarks {
  readonly #read = new Set<string>();
  readonly #store: Store;
  readonly #onDelete = (metas: MessageMeta[]): void => {
    for (const m of metas) this.#read.delete(m.id);
  };

  constructor(store: Store) {
    this.#store = store;
    store.on('delete', this.#onDelete);
  }

  /** Stops following the store's deletes (the HTTP API closes). */
  dispose(): void {
    this.#store.off('delete', this.#onDelete);
  }

  isRead(id: string): boolean {
    return this.#read.has(id);
  }

  set(id: string, read: boolean): void {
    if (!read) {
      this.#read.delete(id);
      return;
    }
    this.#read.delete(id);
    this.#read.add(id);
    if (this.#read.size > MAX_MARKS) this.#read.delete(this.#read.values().next().value as string);
  }

  forget(id: string): void {
    this.#read.delete(id);
  }

  clear(): void {
    this.#read.clear();
  }

  get size(): number {
    return this.#read.size;
  }
}
