// cleanFileName: the one cleaning of attachment names, shown in the message view and used by
// Save Attachment. Examples for each gap, then properties over arbitrary names.
import * as assert from 'node:assert/strict';
import fc from 'fast-check';
import { cleanFileName, decodeFileName, encodeFileName, MAX_FILE_NAME_BYTES } from '../../src/core/fileNames';

const utf8 = (s: string): number => Buffer.byteLength(s, 'utf8');
const FALLBACK = 'attachment-1';

describe('cleanFileName', () => {
  it('removes a right-to-left override that disguises an executable', () => {
    assert.equal(cleanFileName('invoice\u202Efdp.exe', FALLBACK), 'invoicefdp.exe');
    assert.equal(cleanFileName('a\u2066b\u2069\u200Fc\u200B.txt', FALLBACK), 'abc.txt');
  });

  it('replaces C0 and C1 controls and DEL', () => {
    assert.equal(cleanFileName('a\u0000b\u0085c\u009Bd\u007Fe.txt', FALLBACK), 'a_b_c_d_e.txt');
  });

  it('keeps only the last path segment and replaces characters Windows forbids', () => {
    assert.equal(cleanFileName('../../etc/passwd', FALLBACK), 'passwd');
    assert.equal(cleanFileName('C:\\Users\\x\\a<b>:c?.txt', FALLBACK), 'a_b__c_.txt');
  });

  it('prefixes Windows device names, with or without an extension, in any case', () => {
    for (const n of ['CON', 'nul.txt', 'COM1.log', 'lpt9', 'Aux.tar.gz', 'com¹']) assert.equal(cleanFileName(n, FALLBACK), `_${n}`);
    assert.equal(cleanFileName('console.txt', FALLBACK), 'console.txt');
  });

  it('drops trailing dots and spaces and leading dots', () => {
    assert.equal(cleanFileName('report.pdf. . ', FALLBACK), 'report.pdf');
    assert.equal(cleanFileName('..hidden', FALLBACK), 'hidden');
    assert.equal(cleanFileName(' . ', FALLBACK), FALLBACK);
    assert.equal(cleanFileName('', FALLBACK), FALLBACK);
  });

  it('cuts a long name between characters and keeps its extension', () => {
    const long = `${'é'.repeat(150)}👍🏽${'x'.repeat(100)}.pdf`;
    const out = cleanFileName(long, FALLBACK);
    assert.ok(utf8(out) <= MAX_FILE_NAME_BYTES);
    assert.ok(out.endsWith('.pdf'));
    assert.ok(!out.includes('\uFFFD'));
    const emoji = cleanFileName(`${'a'.repeat(193)}👍🏽.png`, FALLBACK);
    assert.equal(emoji, `${'a'.repeat(193)}.png`, 'the emoji and its skin tone go together');
  });

  it('property: the result is always a safe, bounded, idempotent name', () => {
    const names = fc.oneof(
      fc.string({ unit: 'binary', maxLength: 300 }),
      fc.string({ unit: fc.constantFrom('a', '.', ' ', '\u202E', '\u0085', '/', '\\', ':', 'é', '👍', '\uD800', 'CON', 'nul', 'com1', 'x'.repeat(60)), maxLength: 20 }),
    );
    fc.assert(
      fc.property(names, (name) => {
        const out = cleanFileName(name, FALLBACK);
        assert.ok(out.length > 0);
        assert.ok(utf8(out) <= MAX_FILE_NAME_BYTES, `${utf8(out)} bytes`);
        assert.doesNotMatch(out, /[\\/<>:"|?*\p{Cc}\u061C\u200B-\u200F\u202A-\u202E\u2060-\u2069\uFEFF]/u);
        assert.doesNotMatch(out, /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/);
        assert.doesNotMatch(out, /^(con|prn|aux|nul|com[0-9¹²³]|lpt[0-9¹²³])(\..*)?$/i);
        assert.doesNotMatch(out, /^[.\s]|[.\s]$/u);
        assert.equal(cleanFileName(out, FALLBACK), out, 'idempotent');
      }),
      { numRuns: 3000 },
    );
  });

  it('property: a short clean name with an extension keeps its extension when cut', () => {
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom('a', 'é', '👍', '한'), minLength: 1, maxLength: 400 }), fc.constantFrom('.pdf', '.tar', '.docx'), (stem, ext) => {
        const out = cleanFileName(stem + ext, FALLBACK);
        assert.ok(out.endsWith(ext));
        assert.ok((stem + ext).startsWith(out.slice(0, -ext.length)), 'a prefix of the stem');
      }),
    );
  });
});

// encodeFileName: the store's mapping from domains, inboxes and message ids to file names.
// Only Linux runs here, so the rules of Windows and macOS file systems are checked on the
// mapping itself.
const WINDOWS_FORBIDDEN = /[<>:"/\\|?*\u0000-\u001f]/;
const WINDOWS_DEVICE = /^(con|prn|aux|nul|com[0-9¹²³]|lpt[0-9¹²³]|conin\$|conout\$)(\..*)?$/i;

/** What Windows, macOS and Linux all take as one distinct file name. */
function assertPortable(out: string): void {
  assert.doesNotMatch(out, WINDOWS_FORBIDDEN, 'no character Windows forbids');
  assert.doesNotMatch(out, WINDOWS_DEVICE, 'not a Windows device name');
  assert.doesNotMatch(out, /[. ]$/, 'no trailing dot or space (Windows drops them)');
  assert.doesNotMatch(out, /^\./, 'not hidden, not . or ..');
  assert.match(out, /^[\x21-\x7e]*$/, 'ASCII only: nothing a file system folds or normalises');
}

describe('encodeFileName / decodeFileName', () => {
  it('keeps plain lower-case names as they are', () => {
    for (const n of ['inbox.test', 'joe', 'a-b_c+d=e.f', 'joe-1700000000-42']) assert.equal(encodeFileName(n), n);
  });

  it('escapes Windows device names with any extension, in any case', () => {
    assert.equal(encodeFileName('con'), '%63on');
    assert.equal(encodeFileName('nul.tar.gz'), '%6Eul.tar.gz');
    assert.equal(encodeFileName('com1.example'), '%63om1.example');
    assert.equal(encodeFileName('lpt9'), '%6Cpt9');
    assert.equal(encodeFileName('CON'), '%43%4F%4E');
    assert.equal(encodeFileName('console'), 'console');
    for (const n of ['con', 'CON', 'Aux.txt', 'nul.', 'com¹', 'conin$', 'prn .x']) assertPortable(encodeFileName(n));
  });

  it('escapes trailing dots and spaces, leading dots, and characters Windows forbids', () => {
    assert.equal(encodeFileName('a.'), 'a%2E');
    assert.equal(encodeFileName('a '), 'a%20');
    assert.equal(encodeFileName('.hidden'), '%2Ehidden');
    assert.equal(encodeFileName('..'), '%2E%2E');
    assert.equal(encodeFileName('a*b|c?d\'e'), 'a%2Ab%7Cc%3Fd%27e');
    assert.equal(encodeFileName('a/b\\c:d'), 'a%2Fb%5Cc%3Ad');
  });

  it('never maps two names to file names that differ only in case', () => {
    assert.notEqual(encodeFileName('Joe').toLowerCase(), encodeFileName('joe').toLowerCase());
    assert.equal(encodeFileName('é'), '%C3%A9', 'UTF-8 bytes, so NFC and NFD forms stay distinct names');
    assert.notEqual(encodeFileName('e\u0301'), encodeFileName('é'));
  });

  it('round-trips a name that begins with U+FEFF (not taken for a byte-order mark)', () => {
    for (const name of ['\ufeff', '\ufeffinbox', 'a\ufeff']) assert.equal(decodeFileName(encodeFileName(name)), name, JSON.stringify(name));
  });

  it('rejects file names it never produces', () => {
    for (const f of ['con', 'a.', '.x', 'A', '%2e', '%G1', '%C3', 'a%2', 'tokens json', '%41%2E'.slice(0, 4), '%61']) assert.equal(decodeFileName(f), undefined, f);
  });

  it('property: round-trips, is portable, and stays distinct under case folding', () => {
    const names = fc.oneof(
      fc.string({ unit: 'binary', maxLength: 40 }),
      fc.string({ unit: fc.constantFrom('a', 'C', 'o', 'n', 'u', 'l', '1', '.', ' ', '%', '*', 'é', 'E\u0301', '👍', 'com', 'nul', 'lpt', 'aux'), maxLength: 8 }),
    );
    fc.assert(
      fc.property(names, names, (a, b) => {
        const ea = encodeFileName(a);
        assert.equal(decodeFileName(ea), a, 'round-trips');
        if (a !== '') assertPortable(ea);
        if (a !== b) assert.notEqual(ea.toLowerCase(), encodeFileName(b).toLowerCase(), 'distinct on a case-insensitive file system');
      }),
      { numRuns: 5000 },
    );
  });
});
