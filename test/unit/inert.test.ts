// inertText: message-derived text shown where VS Code renders syntax carries no link, icon or
// autolink syntax, and reads the same once the inserted breaks are removed. plainText and
// inertText both take out bidi controls, turn control characters into
// spaces and cut very long values with an ellipsis.
import * as assert from 'node:assert/strict';
import fc from 'fast-check';
import { BIDI_CONTROLS, ELLIPSIS, INERT_BREAK, inert, inertText, MAX_VALUE_LENGTH, plain, plainText, type Inert, type Plain } from '../../src/core/inert';

/** VS Code's notification link syntax: `[text](target)` with an http(s), command: or file: target. */
const NOTIFICATION_LINK = /\[([^\]]+)\]\(((?:https?:\/\/|command:|file:)[^)\s]+)(?: (["'])(.+?)(\3))?\)/i;
/** Codicon syntax in labels and the status bar. */
const ICON = /\$\([a-z0-9-]+(?:~[a-z0-9-]+)?\)/i;

/** Strings built from the characters of the syntaxes, so the generator hits them often. */
const syntaxy = fc.string({ unit: fc.constantFrom('[', ']', '(', ')', '$', ':', '/', '<', '>', 'a', 'command', 'https', ' ', 'x.y', '\\', INERT_BREAK), maxLength: 40 });

describe('inertText', () => {
  it('breaks a command link, a reference link, an icon and an autolink', () => {
    const hostile = 'Invoice [Open](command:workbench.action.terminal.new) [x][1] $(alert) <https://evil.test>';
    const out = inertText(hostile);
    assert.doesNotMatch(out, NOTIFICATION_LINK);
    assert.doesNotMatch(out, ICON);
    assert.ok(!out.includes(']('));
    assert.ok(!out.includes(']['));
    assert.ok(!out.includes('://'));
    assert.equal(out.split(INERT_BREAK).join(''), hostile);
  });

  it('leaves text without syntax as it is', () => {
    assert.equal(inertText('Your code is 123456 (valid 10 min)'), 'Your code is 123456 (valid 10 min)');
  });

  it('property: no link or icon syntax survives, and nothing but breaks is added', () => {
    fc.assert(
      fc.property(fc.oneof(syntaxy, fc.string()), (s) => {
        const out = inertText(s);
        assert.doesNotMatch(out, NOTIFICATION_LINK);
        assert.doesNotMatch(out, ICON);
        for (const pair of ['](', '][', ']:', '$(', '://']) assert.ok(!out.includes(pair), `${JSON.stringify(out)} contains ${pair}`);
        // Nothing but breaks is added: the text is plainText's (bidi controls out, controls as spaces, cut).
        assert.equal(out.split(INERT_BREAK).join(''), plainText(s).split(INERT_BREAK).join(''));
      }),
      { numRuns: 2000 },
    );
  });
});

/** Graphemes of a string, as a reader counts characters. */
function graphemes(s: string): string[] {
  return [...new Intl.Segmenter(undefined, { granularity: 'grapheme' }).segment(s)].map((x) => x.segment);
}

/** Every bidi control a sender can put in a subject or a display name. */
const BIDI = ['\u061C', '\u200E', '\u200F', '\u202A', '\u202B', '\u202C', '\u202D', '\u202E', '\u2066', '\u2067', '\u2068', '\u2069'];

describe('plainText and inertText: bidi controls, controls and length', () => {
  it('takes out a right-to-left override (U+202E): a subject reads as written, not as "…exe.png"', () => {
    assert.equal(plainText('Invoice \u202Egnp.exe'), 'Invoice gnp.exe');
    assert.equal(inertText('Invoice \u202Egnp.exe'), 'Invoice gnp.exe');
    // A sender written backwards behind an override reads backwards, not as "bank-finance".
    assert.equal(plainText('\u202Eecnanif-knab\u202C <x@evil.test>'), 'ecnanif-knab <x@evil.test>');
    for (const c of BIDI) assert.equal(plainText(`a${c}b`), 'ab', `U+${c.charCodeAt(0).toString(16)}`);
  });

  it('keeps what is not a control: right-to-left scripts, emoji sequences (ZERO WIDTH JOINER), combining marks', () => {
    for (const text of ['שלום עולם', 'مرحبا', '👩‍💻 ready', 'é (e + U+0301)', 'Ünïcödé']) assert.equal(plainText(text), text);
  });

  it('turns line breaks, tabs and other controls into spaces (one line per value)', () => {
    assert.equal(plainText('one\ntwo\r\nthree\tfour\u0000five\u2028six'), 'one two  three four five six');
  });

  it('cuts a very long value with an ellipsis, between graphemes', () => {
    const long = 'Subject '.repeat(500);
    const out = plainText(long);
    assert.equal(graphemes(out).length, MAX_VALUE_LENGTH);
    assert.ok(out.endsWith(ELLIPSIS));
    assert.ok(long.startsWith(out.slice(0, -1)));
    // An emoji sequence at the cut is kept whole or dropped whole.
    const emoji = '👩‍💻'.repeat(200);
    const cutEmoji = plainText(emoji);
    assert.equal(graphemes(cutEmoji).length, MAX_VALUE_LENGTH);
    assert.ok(graphemes(cutEmoji).slice(0, -1).every((g) => g === '👩‍💻'));
    // Exactly at the limit: nothing is cut.
    const exact = 'x'.repeat(MAX_VALUE_LENGTH);
    assert.equal(plainText(exact), exact);
    assert.equal(plainText('x'.repeat(MAX_VALUE_LENGTH + 1)), 'x'.repeat(MAX_VALUE_LENGTH - 1) + ELLIPSIS);
  });

  it('the templates tame every value and keep the literal parts (our icons, our line breaks)', () => {
    const subject = '\u202Egnp.exe $(alert) [x](command:evil)';
    const t: Inert = inert`$(check) Copied from "${subject}"\nDone`;
    assert.ok(t.startsWith('$(check) Copied from "gnp.exe '), t);
    assert.ok(t.endsWith('"\nDone'), t);
    assert.ok(!t.slice(1).includes('$('), t);
    assert.ok(!t.includes(']('), t);
    const p: Plain = plain`From: ${'a\nb\u202E'}\nTo: x`;
    assert.equal(p, 'From: a b\nTo: x');
  });

  it('a value ending in "$" or ":" cannot join the literal after it into an icon or a URL', () => {
    assert.ok(!inert`${'cost $'}(check)`.includes('$('));
    assert.ok(!inert`${'see https:'}//evil.test`.includes('://'));
    assert.ok(!inert`${'see https:/'}/evil.test`.includes('://'));
  });

  it('property: no bidi control, no control character, at most MAX_VALUE_LENGTH graphemes; plainText is idempotent', () => {
    const hostile = fc.string({ unit: fc.constantFrom(...BIDI, 'a', ' ', '\n', '\u0007', 'é', '👩‍💻', '$', '(', ']', ':', '/'), maxLength: 300 });
    fc.assert(
      fc.property(fc.oneof(hostile, fc.string({ maxLength: 300 }), fc.string({ unit: 'grapheme', maxLength: 300 })), (s) => {
        for (const out of [plainText(s), inertText(s)]) {
          assert.doesNotMatch(out, BIDI_CONTROLS);
          assert.doesNotMatch(out, /[\p{Cc}\u2028\u2029]/u);
          assert.ok(graphemes(out.split(INERT_BREAK).join('')).length <= MAX_VALUE_LENGTH, JSON.stringify(out));
        }
        assert.equal(plainText(plainText(s)), plainText(s));
      }),
      { numRuns: 1000 },
    );
  });

  it('a raw string is not Plain or Inert: the tree, notifications and the status bar take only text made here', () => {
    // @ts-expect-error a string from a message must pass through plainText/plain first
    const p: Plain = 'subject';
    // @ts-expect-error and through inertText/inert for a place that renders syntax
    const i: Inert = plainText('subject');
    const ok: Plain = inertText('subject'); // Inert text is fine where plain text goes
    assert.ok(p && i && ok);
  });
});
