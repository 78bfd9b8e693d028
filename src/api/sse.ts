// Incremental parser for `text/event-stream` (WHATWG HTML, "Server-sent events"): the
// `eventsource-parser` package reads the fields and assembles the events; this wrapper decodes
// bytes (a UTF-8 sequence may be split across chunks), keeps the last event id and `retry:`
// sticky, and bounds what a server can make it hold. eventsource-parser buffers an unfinished
// line and the data of an unfinished event without limit, so every chunk is measured here,
// before it is fed: a line longer than MAX_SSE_LINE_CHARS or an event (everything between two
// blank lines) longer than MAX_SSE_EVENT_CHARS fails with an SseProtocolError instead.
import { createParser, type EventSourceParser } from 'eventsource-parser';
import { codedError, type CodedError } from '../core/errors';

/** Longest line kept in the buffer: a stream event of ours is one JSON summary, far below this. */
export const MAX_SSE_LINE_CHARS = 1024 * 1024;
/**
 * Longest event, counting every line (and line end) from one blank line to the next. Twice
 * the line cap: an event of ours is one data line plus short `event:` and `id:` lines, so none
 * comes near it, while a stream that never ends its event is stopped after a few lines.
 */
export const MAX_SSE_EVENT_CHARS = 2 * MAX_SSE_LINE_CHARS;

/** Character codes of the line-end characters. */
const CR = 13;
const LF = 10;

export interface SseEvent {
  /** `message` when the stream named none. */
  event: string;
  data: string;
  /** Last event id seen (sticky, as the spec says). */
  id?: string;
  /** Reconnection time the server asked for, in ms. */
  retry?: number;
}

type SseProtocolErrorCode = 'sse_line_too_long' | 'sse_event_too_long';

/** The stream broke a limit of this parser; the connection cannot be read further. */
export const SseProtocolError = codedError<SseProtocolErrorCode>('SseProtocolError');
export type SseProtocolError = CodedError<SseProtocolErrorCode>;

export class SseParser {
  private readonly decoder = new TextDecoder('utf-8');
  private readonly parser: EventSourceParser;
  private first = true;
  private completed: SseEvent[] = [];
  private lastId: string | undefined;
  private retry: number | undefined;
  /** Characters of the line not ended yet. */
  private lineChars = 0;
  /** Characters (line ends included) since the last blank line. */
  private eventChars = 0;
  /** The last chunk ended in CR: an LF opening the next one belongs to the same line end. */
  private afterCr = false;
  private blankLines = 0;

  constructor() {
    this.parser = createParser({
      onEvent: (m) => {
        if (m.id !== undefined) this.lastId = m.id;
        const ev: SseEvent = { event: m.event ?? 'message', data: m.data };
        if (this.lastId !== undefined) ev.id = this.lastId;
        if (this.retry !== undefined) ev.retry = this.retry;
        this.completed.push(ev);
      },
      onRetry: (ms) => {
        this.retry = ms;
      },
      // Unknown fields and malformed `retry:` values are ignored, as the format says.
    });
  }

  /** Feeds bytes (or text); returns the events completed by them. */
  push(chunk: Uint8Array | string): SseEvent[] {
    let text = typeof chunk === 'string' ? chunk : this.decoder.decode(chunk, { stream: true });
    if (text.length === 0) return [];
    if (this.first) {
      this.first = false;
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    }
    // Line ends become LF here. A CR ending a chunk is a whole line end at once (eventsource-parser
    // would hold it until the next chunk shows whether an LF follows); that LF is then dropped.
    if (this.afterCr && text.charCodeAt(0) === LF) text = text.slice(1);
    this.afterCr = text.charCodeAt(text.length - 1) === CR;
    if (text.includes('\r')) text = text.replace(/\r\n?/g, '\n');
    this.measure(text);
    this.parser.feed(text);
    const events = this.completed;
    this.completed = [];
    return events;
  }

  /** Counts the lines and blank lines of `text` (LF line ends only); throws before a limit would be passed. */
  private measure(text: string): void {
    let i = 0;
    while (i < text.length) {
      const end = text.indexOf('\n', i);
      if (end === -1) {
        this.grow(text.length - i);
        return;
      }
      if (this.lineChars === 0 && end === i) {
        this.eventChars = 0;
        this.blankLines++;
      } else {
        this.grow(end - i);
        this.lineChars = 0;
        this.eventChars++; // the line end
      }
      i = end + 1;
    }
  }

  private grow(chars: number): void {
    this.lineChars += chars;
    this.eventChars += chars;
    if (this.lineChars > MAX_SSE_LINE_CHARS) {
      throw new SseProtocolError('sse_line_too_long', `The event stream sent a line longer than ${MAX_SSE_LINE_CHARS} characters.`);
    }
    if (this.eventChars > MAX_SSE_EVENT_CHARS) {
      throw new SseProtocolError('sse_event_too_long', `The event stream sent an event longer than ${MAX_SSE_EVENT_CHARS} characters.`);
    }
  }

  /**
   * Blank lines seen: every event ended, with data or without (a `: ping` comment followed by
   * a blank line). The stream's idle timer restarts when this moves.
   */
  get eventsEnded(): number {
    return this.blankLines;
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
