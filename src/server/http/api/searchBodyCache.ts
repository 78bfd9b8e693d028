// The searchable bodies a search read lately (search.ts), kept for the next search: typing a
// query searches on each keystroke. Its own module so the API context can hold one without
// importing the search route.
import { parseMessageId } from '../../../core/ids';
import type { SearchableBody } from '../../../core/search';
import type { MessageMeta } from '../../store/types';

/** Text kept of bodies already read. */
const BODY_CACHE_CHARS = 16 * 1024 * 1024;

/**
 * The searchable bodies read lately, by message id (a message never changes, and an id is never
 * reused). It keeps the newest messages, not the last used: a search reads newest first, so a
 * scan longer than the cache would evict under LRU exactly what the next scan reads first.
 */
export class SearchBodyCache {
  private readonly entries = new Map<string, { body: SearchableBody; key: number }>();
  private chars = 0;
  /** The oldest key kept once the cache has been full (older bodies are not kept). */
  private floor = -Infinity;

  constructor(private readonly capacity = BODY_CACHE_CHARS) {}

  get(id: string): SearchableBody | undefined {
    return this.entries.get(id)?.body;
  }

  set(meta: Pick<MessageMeta, 'id' | 'time'>, body: SearchableBody): void {
    const parsed = parseMessageId(meta.id);
    if (!parsed || body.text.length > this.capacity / 8) return;
    // Receipt order: the id's second and counter (the store's own order).
    const key = parsed.seconds * 1e12 + parsed.counter;
    if (key < this.floor) return;
    const had = this.entries.get(meta.id);
    if (had) this.chars -= had.body.text.length;
    this.entries.set(meta.id, { body, key });
    this.chars += body.text.length;
    if (this.chars <= this.capacity) return;
    // Over: drop the oldest quarter (by key) at once, so eviction costs one sort per many inserts.
    const byAge = [...this.entries].sort((a, b) => a[1].key - b[1].key);
    let i = 0;
    while (i < byAge.length && (this.chars > this.capacity * 0.75 || i === 0)) {
      this.entries.delete(byAge[i][0]);
      this.chars -= byAge[i][1].body.text.length;
      i++;
    }
    this.floor = byAge[i]?.[1].key ?? -Infinity;
  }
}
