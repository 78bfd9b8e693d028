// Reads the few headers the index keeps (From, Subject, Date) from the top of a raw
// RFC 5322 message without a full MIME parse: the ack path stores bytes and indexes
// headers only; full parsing happens on read.

/** Scan at most this much of a message for its header block: real header blocks are a few KB, and this bounds work per message on the ack path. */
const MAX_HEADER_SCAN_BYTES = 256 * 1024;

interface IndexedHeaders {
  /** Decoded From header (`Name <addr>` or `addr`), '' when absent. */
  from: string;
  /** Decoded Subject header, '' when absent. */
  subject: string;
  /** Date header parsed to ms since the epoch, undefined when absent or unparseable. */
  date?: number;
}

/** A header field's name (RFC 5322 3.6.8 field-name): printable ASCII, 33 to 126, except ':'. */
const FIELD_NAME = '[\\x21-\\x39\\x3b-\\x7e]+';
const FIELD_NAME_RE = new RegExp(`^${FIELD_NAME}$`);
const HEADER_LINE_RE = new RegExp(`^${FIELD_NAME}[ \\t]*:`);

/** Whether `name` may name a header field: what the provider routes take in a sender's own headers, and what this index reads. */
export function isFieldName(name: string): boolean {
  return FIELD_NAME_RE.test(name);
}

/**
 * The header block of `raw` as unfolded `[name, value]` pairs (names lowercase), or undefined
 * when no line of it is a header field (a damaged or foreign file). A line that is not one (a
 * name with a blank, say) is skipped, the first one too: one bad line hides no other field.
 */
export function readHeaderFields(raw: Buffer): Array<[string, string]> | undefined {
  const scan = raw.subarray(0, Math.min(raw.length, MAX_HEADER_SCAN_BYTES));
  let end = scan.length;
  const crlf = scan.indexOf('\r\n\r\n');
  const lf = scan.indexOf('\n\n');
  if (crlf >= 0 && (lf < 0 || crlf < lf)) end = crlf;
  else if (lf >= 0) end = lf;
  // Header bytes are ASCII or (SMTPUTF8) UTF-8; 8-bit legacy bytes decode as replacement characters.
  const text = scan.subarray(0, end).toString('utf8');
  const lines = text.split(/\r?\n/);
  const fields: Array<[string, string]> = [];
  // Whether the last line was a field taken: a folded line continues it, and only it.
  let inField = false;
  for (const line of lines) {
    if (line.startsWith(' ') || line.startsWith('\t')) {
      if (inField) fields[fields.length - 1][1] += line;
      continue;
    }
    const colon = line.indexOf(':');
    inField = colon > 0 && HEADER_LINE_RE.test(line);
    if (!inField) continue; // a stray line inside the block: ignore it (and its folded lines), keep the rest
    fields.push([line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1)]);
  }
  if (fields.length === 0) return undefined;
  // Trimmed once unfolded: a value may start on the next line (`Subject:` CRLF SP `text`).
  for (const f of fields) f[1] = f[1].trim();
  return fields;
}

/** From, Subject and Date of a raw message, or undefined when it has no header block. */
export function parseIndexedHeaders(raw: Buffer): IndexedHeaders | undefined {
  const fields = readHeaderFields(raw);
  if (!fields) return undefined;
  const first = (name: string): string | undefined => fields.find(([n]) => n === name)?.[1];
  const dateText = first('date');
  const date = dateText === undefined ? NaN : Date.parse(dateText);
  return {
    from: decodeEncodedWords(first('from') ?? ''),
    subject: decodeEncodedWords(first('subject') ?? ''),
    ...(Number.isFinite(date) ? { date } : {}),
  };
}

const ENCODED_WORD_RE = /=\?([^?\s]+)\?([bBqQ])\?([^?\s]*)\?=/g;
const BETWEEN_ENCODED_WORDS_RE = /(=\?[^?\s]+\?[bBqQ]\?[^?\s]*\?=)\s+(?==\?[^?\s]+\?[bBqQ]\?[^?\s]*\?=)/g;

/** Decodes RFC 2047 encoded-words (`=?charset?B|Q?text?=`); whitespace between adjacent encoded-words is dropped (RFC 2047 6.2). Unknown charsets are left encoded. */
export function decodeEncodedWords(value: string): string {
  if (!value.includes('=?')) return value;
  const joined = value.replace(BETWEEN_ENCODED_WORDS_RE, '$1');
  // Adjacent words of one charset are decoded together so a multi-byte character split across words survives.
  // Chunks are gathered and joined once, so a run of many adjacent words stays linear.
  const pieces: Array<{ charset: string; chunks: Buffer[] } | string> = [];
  let last = 0;
  for (const m of joined.matchAll(ENCODED_WORD_RE)) {
    if (m.index > last) pieces.push(joined.slice(last, m.index));
    const charset = m[1].split('*')[0].toLowerCase(); // RFC 2231 language suffix
    const bytes = m[2].toLowerCase() === 'b' ? Buffer.from(m[3], 'base64') : decodeQ(m[3]);
    const prev = pieces[pieces.length - 1];
    if (typeof prev === 'object' && prev.charset === charset) prev.chunks.push(bytes);
    else pieces.push({ charset, chunks: [bytes] });
    last = m.index + m[0].length;
  }
  if (last < joined.length) pieces.push(joined.slice(last));
  return pieces
    .map((p) => {
      if (typeof p === 'string') return p;
      const bytes = Buffer.concat(p.chunks);
      return decodeCharset(p.charset, bytes) ?? `=?${p.charset}?B?${bytes.toString('base64')}?=`;
    })
    .join('');
}

function decodeQ(text: string): Buffer {
  const out: number[] = [];
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '_') out.push(0x20);
    else if (c === '=' && /^[0-9a-fA-F]{2}$/.test(text.slice(i + 1, i + 3))) {
      out.push(parseInt(text.slice(i + 1, i + 3), 16));
      i += 2;
    } else out.push(text.charCodeAt(i) & 0xff);
  }
  return Buffer.from(out);
}

function decodeCharset(charset: string, bytes: Buffer): string | undefined {
  try {
    return new TextDecoder(charset).decode(bytes);
  } catch {
    return undefined;
  }
}
