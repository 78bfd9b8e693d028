// Incremental parser for `text/event-stream` (WHATWG HTML, "Server-sent events",
// interpretation of the event stream). Bytes may arrive split anywhere, including inside
// a UTF-8 sequence or between the CR and LF of a line end.

/** Longest line kept in the buffer: a stream event of ours is one JSON summary, far below this. */
export const MAX_SSE_LINE_CHARS = 1024 * 1024;

export interface SseEvent {
  /** `message` when the stream named none. */
  event: string;
  data: string;
  /** Last event id seen (sticky, as the spec says). */
  id?: string;
  /** Reconnection time the server asked for, in ms. */
  retry?: number;
}

export class SseLineTooLongError extends Error {
  readonly code = 'SSE_LINE_TOO_LONG';
  constructor() {
    super(`The event stream sent a line longer than ${MAX_SSE_LINE_CHARS} characters.`);
  }
}

export class SseParser {
  private readonly decoder = new TextDecoder('utf-8');
  private buffer = '';
  private skipLf = false;
  private first = true;
  private eventName = '';
  private dataLines: string[] = [];
  private hasData = false;
  private lastId: string | undefined;
  private retry: number | undefined;

  /** Feeds bytes (or text); returns the events completed by them. */
  push(chunk: Uint8Array | string): SseEvent[] {
    let text = typeof chunk === 'string' ? chunk : this.decoder.decode(chunk, { stream: true });
    if (this.first && text.length > 0) {
      this.first = false;
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    }
    const events: SseEvent[] = [];
    let i = 0;
    if (this.skipLf && text.length > 0) {
      if (text[0] === '\n') i = 1;
      this.skipLf = false;
    }
    while (i < text.length) {
      let j = i;
      while (j < text.length && text[j] !== '\n' && text[j] !== '\r') j++;
      if (j === text.length) {
        this.buffer += text.slice(i);
        if (this.buffer.length > MAX_SSE_LINE_CHARS) {
          this.buffer = '';
          throw new SseLineTooLongError();
        }
        break;
      }
      const line = this.buffer + text.slice(i, j);
      this.buffer = '';
      if (text[j] === '\r') {
        if (j + 1 < text.length) {
          if (text[j + 1] === '\n') j++;
        } else {
          this.skipLf = true;
        }
      }
      i = j + 1;
      const ev = this.line(line);
      if (ev) events.push(ev);
    }
    return events;
  }

  private line(line: string): SseEvent | undefined {
    if (line === '') return this.dispatch();
    if (line.startsWith(':')) return undefined; // comment, e.g. `: ping`
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    switch (field) {
      case 'event':
        this.eventName = value;
        break;
      case 'data':
        this.dataLines.push(value);
        this.hasData = true;
        break;
      case 'id':
        if (!value.includes('\u0000')) this.lastId = value;
        break;
      case 'retry':
        if (/^\d+$/.test(value)) this.retry = Number(value);
        break;
      default:
        break; // unknown fields are ignored
    }
    return undefined;
  }

  private dispatch(): SseEvent | undefined {
    const name = this.eventName;
    this.eventName = '';
    if (!this.hasData) return undefined;
    const data = this.dataLines.join('\n');
    this.dataLines = [];
    this.hasData = false;
    const ev: SseEvent = { event: name === '' ? 'message' : name, data };
    if (this.lastId !== undefined) ev.id = this.lastId;
    if (this.retry !== undefined) ev.retry = this.retry;
    return ev;
  }

  /** The last event id seen, for a `Last-Event-ID` header on reconnect. */
  get lastEventId(): string | undefined {
    return this.lastId;
  }

  /** The reconnection delay the server asked for with `retry:`, in ms. */
  get retryMs(): number | undefined {
    return this.retry;
  }
}
