// The searchable bodies a search read lately (search.ts), kept for the next search: typing a
// query searches on each keystroke. Its own module so the API context can hold one without
// importing the search route.
import type { SearchableBody } from '../../../core/search';

/** Text kept of bodies already read. */
const BODY_CACHE_CHARS = 4 * 1024 * 1024;

/** The searchable bodies read lately, by message id (a message never changes, and an id is never reused). */
export class SearchBodyCache {
  private readonly entries = new Map<string, SearchableBody>();
  private chars = 0;

  constructor(private readonly capacity = BODY_CACHE_CHARS) {}

  get(id: string): SearchableBody | undefined {
    const b = this.entries.get(id);
    if (b) {
      this.entries.delete(id);
      this.entries.set(id, b);
    }
    return b;
  }

  set(id: string, body: SearchableBody): void {
    if (body.text.length > this.capacity / 8 || this.entries.has(id)) return;
    this.entries.set(id, body);
    this.chars += body.text.length;
    for (const [old, b] of this.entries) {
      if (this.chars <= this.capacity) break;
      this.entries.delete(old);
      this.chars -= b.text.length;
    }
  }
}
