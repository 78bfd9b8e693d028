// The header fields named `X-Test-Inbox-*` are the server's own: the API a message came through
// (`X-Test-Inbox-Api`, which the message view shows as "Sent through"), the provider's id, its
// test mode and template marks. Only the server writes them. Every byte stream a sender wrote
// (an SMTP message, a provider route's composed message with the sender's `headers`, SES Raw
// and Mailgun `messages.mime`) goes into the store through one sink (spool.ts SpoolingSink),
// which passes it through OwnFieldFilter: any such field of the message's header block is
// dropped, continuation lines with it, and the server's own fields are written before what is
// left. A field of this name in a stored message is then the server's, whichever way the mail
// came; a field added later under the prefix is covered without a change here.
// Composed messages (the inject and webhook routes, Twilio, Verify) never carry a sender's
// header field: their composer takes a sender, a subject and a text, and the server's fields.

/** The name prefix of the server's own header fields, lower case. */
const OWN_PREFIX = 'x-test-inbox-';
const CR = 0x0d;
const LF = 0x0a;
const SP = 0x20;
const HT = 0x09;
const COLON = 0x3a;

/** True for a header field name the server keeps for itself (`X-Test-Inbox-…`, any case). */
export function isOwnFieldName(name: string): boolean {
  return name.toLowerCase().startsWith(OWN_PREFIX);
}

/**
 * Drops every `X-Test-Inbox-*` field (and its continuation lines) from the header block of a
 * message given in chunks; the body after the first empty line passes untouched, without being
 * looked at. Linear in the header block, holding at most the first 13 bytes of one line.
 */
export class OwnFieldFilter {
  /** line: at a line's start; name: reading the start of a field's name; keep / drop: the rest of a line; body: past the header block. */
  #state: 'line' | 'name' | 'keep' | 'drop' | 'body' = 'line';
  /** The start of the current line while its name is read (at most OWN_PREFIX.length bytes). */
  #head: number[] = [];
  /** The current field is the server's: its continuation lines are dropped with it. */
  #dropping = false;

  /** The bytes of `chunk` that are kept. */
  push(chunk: Buffer): Buffer {
    if (this.#state === 'body') return chunk;
    const out = Buffer.allocUnsafe(chunk.length + this.#head.length);
    let n = 0;
    for (let i = 0; i < chunk.length; i++) {
      const b = chunk[i];
      switch (this.#state) {
        case 'line':
          if (b === LF) {
            out[n++] = b;
            return this.#toBody(out, n, chunk, i + 1);
          }
          if (b === SP || b === HT) {
            // A continuation line belongs to the field before it.
            this.#state = this.#dropping ? 'drop' : 'keep';
            if (!this.#dropping) out[n++] = b;
            break;
          }
          this.#head = [b];
          this.#state = 'name';
          break;
        case 'name': {
          const head = this.#head;
          head.push(b);
          if (head.length === 2 && head[0] === CR && b === LF) {
            // The empty line that ends the header block.
            out[n++] = CR;
            out[n++] = LF;
            this.#head = [];
            return this.#toBody(out, n, chunk, i + 1);
          }
          if (b !== LF && b !== COLON && head.length < OWN_PREFIX.length) break;
          this.#dropping = head.length === OWN_PREFIX.length && String.fromCharCode(...head).toLowerCase() === OWN_PREFIX;
          if (!this.#dropping) for (const x of head) out[n++] = x;
          this.#head = [];
          this.#state = b === LF ? 'line' : this.#dropping ? 'drop' : 'keep';
          break;
        }
        case 'keep':
          out[n++] = b;
          if (b === LF) this.#state = 'line';
          break;
        case 'drop':
          if (b === LF) this.#state = 'line';
          break;
      }
    }
    return out.subarray(0, n);
  }

  /** What is held back at the end of the message (a last line shorter than a name can say). */
  end(): Buffer {
    const rest = Buffer.from(this.#head);
    this.#head = [];
    return rest;
  }

  #toBody(out: Buffer, n: number, chunk: Buffer, from: number): Buffer {
    this.#state = 'body';
    return Buffer.concat([out.subarray(0, n), chunk.subarray(from)]);
  }
}
