import assert from 'node:assert/strict';
import fc from 'fast-check';
import { htmlToText, isHiddenElement, parseHtml } from '../../src/core/html';

type Event = ['open', string, Record<string, string>] | ['close', string] | ['text', string];

/** What parseHtml reports, with adjacent text joined (the parser may report one run in pieces). */
function events(html: string): Event[] {
  const out: Event[] = [];
  parseHtml(html, {
    open: (name, attrs) => out.push(['open', name, { ...attrs }]),
    close: (name) => out.push(['close', name]),
    text: (text) => {
      const last = out[out.length - 1];
      if (last?.[0] === 'text') last[1] += text;
      else out.push(['text', text]);
    },
  });
  return out;
}

function textOf(html: string): string {
  return events(html)
    .filter((e) => e[0] === 'text')
    .map((e) => e[1])
    .join('');
}

describe('parseHtml: references', () => {
  it('decodes named, decimal and hex references', () => {
    assert.equal(textOf('a &amp; b &lt;c&gt; &quot;d&quot; &#39;e&#39; &#x2F; &eacute;t&eacute; &Uuml;ber &ntilde;'), 'a & b <c> "d" \'e\' / été Über ñ');
  });

  it('leaves unknown names and bare ampersands alone', () => {
    assert.equal(textOf('Tom & Jerry &madeup; &#; &'), 'Tom & Jerry &madeup; &#; &');
  });

  it('maps invalid code points to U+FFFD and 0x80–0x9F to Windows-1252', () => {
    assert.equal(textOf('&#0;&#xD800;&#x110000;&#99999999999999;'), '\ufffd\ufffd\ufffd\ufffd');
    assert.equal(textOf('&#150;&#128;&#x92;'), '–€’');
  });

  it('decodes legacy names without a semicolon in text but not before = in an attribute', () => {
    assert.equal(textOf('&copy 2024 &amp more'), '© 2024 & more');
    const attr = (v: string): string | undefined => (events(`<a href="${v}">`)[0] as ['open', string, Record<string, string>])[2].href;
    assert.equal(attr('?a=1&copy=2&amp=3'), '?a=1&copy=2&amp=3');
    assert.equal(attr('?a=1&amp;b=2'), '?a=1&b=2');
  });
});

describe('parseHtml: tags', () => {
  it('reads start tags with quoted, unquoted and valueless attributes, lowercased, first duplicate winning', () => {
    assert.deepEqual(events('<A HREF="x&amp;y" data-x=1 Hidden title=\'t\' href="ignored">hi</A>'), [
      ['open', 'a', { href: 'x&y', 'data-x': '1', hidden: '', title: 't' }],
      ['text', 'hi'],
      ['close', 'a'],
    ]);
  });

  it('stores attributes named like Object.prototype members without touching the prototype', () => {
    let attrs: Record<string, string> | undefined;
    parseHtml('<a constructor="c" toString="t" __proto__="p" href="h">', { open: (_n, a) => (attrs = a) });
    assert.ok(attrs);
    assert.equal(attrs.constructor, 'c');
    assert.equal(attrs.tostring, 't');
    assert.equal(attrs.href, 'h');
    assert.equal(({} as Record<string, unknown>).href, undefined);
  });

  it('treats a < that does not open a tag as text and drops comments and doctypes', () => {
    assert.deepEqual(events('<!DOCTYPE html>1 < 2 <!-- c <b> --> 3 <3'), [['text', '1 < 2  3 <3']]);
  });

  it('keeps script and style content as raw text up to the matching end tag', () => {
    const e = events('<style>p > a { color: red }</p></STYLE >after');
    assert.deepEqual(e, [['open', 'style', {}], ['text', 'p > a { color: red }</p>'], ['close', 'style'], ['text', 'after']]);
  });

  it('closes what is left open at the end, innermost first, and says so', () => {
    const closes: Array<[string, boolean]> = [];
    parseHtml('<div><span>x', { close: (name, _implied, atEnd) => closes.push([name, atEnd]) });
    assert.deepEqual(closes, [['span', true], ['div', true]]);
  });
});

describe('htmlToText', () => {
  it('drops head, title, style, script and comments', () => {
    const html = `<!doctype html><html><head><meta charset="utf-8"><title>Your code</title>
      <style>.code { color: #123456; font-size: 24px }</style><script>var x = 999999;</script></head>
      <body><!-- tracking 777777 --><p>Hello</p></body></html>`;
    assert.equal(htmlToText(html), 'Hello');
  });

  it('ends an unclosed head at the first body content, as browsers do', () => {
    assert.equal(htmlToText('<head><title>T</title><div>Visible</div>'), 'Visible');
    assert.equal(htmlToText('<head><meta charset=utf-8>Text right away'), 'Text right away');
  });

  it('puts block elements on their own lines and separates table cells', () => {
    const html = '<table><tr><td>Code</td><td>482 913</td></tr><tr><td>Expires</td><td>10 min</td></tr></table><p>Thanks,<br>Team</p>';
    assert.equal(htmlToText(html), 'Code\t482 913\nExpires\t10 min\nThanks,\nTeam');
  });

  it('collapses whitespace, decodes references and removes zero-width padding', () => {
    const html = '<p>  Your\n   code&nbsp;is&#160;<b>123</b>&nbsp;<b>456</b> </p><div>&zwnj;&nbsp;&zwnj;&nbsp;&#8203;</div><p>caf&eacute;</p>';
    assert.equal(htmlToText(html), 'Your code is 123 456\ncafé');
  });

  it('hides elements hidden by display:none, visibility:hidden or the hidden attribute, unless asked', () => {
    const html = '<div style="display: none; max-height:0">Preheader 111111</div><p>Body</p><span hidden>x</span><span style="visibility:hidden">y</span>';
    assert.equal(htmlToText(html), 'Body');
    assert.equal(htmlToText(html, { includeHidden: true }), 'Preheader 111111\nBody\nxy');
  });

  it('keeps the content of a hidden-looking element that is never closed rather than losing the rest', () => {
    assert.equal(htmlToText('<div style="display:none">a<p>b'), 'a\nb');
  });

  it('drops the text of a script, style or title left open at the end, and of a hidden element closed early', () => {
    assert.equal(htmlToText('<p>a</p><script>var code = 999999'), 'a');
    assert.equal(htmlToText('<p>a</p><style>.x{color:#123456}'), 'a');
    assert.equal(htmlToText('<p hidden>111111<p>b'), 'b');
    assert.equal(htmlToText('<div><span style="display:none">111111</div>b'), 'b');
  });

  it('recognises hidden styles', () => {
    assert.equal(isHiddenElement({ style: 'DISPLAY : NONE !important' }), true);
    assert.equal(isHiddenElement({ style: 'max-height:0px;overflow:hidden;mso-hide:all' }), true);
    assert.equal(isHiddenElement({ style: 'height:0;' }), false);
    assert.equal(isHiddenElement({ style: 'display:block;height:10px' }), false);
  });

  it('keeps line breaks inside pre', () => {
    assert.equal(htmlToText('<pre>line 1\nline 2</pre>'), 'line 1\nline 2');
  });

  it('drops a tag cut off by the end of input instead of showing markup', () => {
    assert.equal(htmlToText('<p>ok</p><a href="https://x'), 'ok');
  });

  it('never throws and never returns markup of well-formed tags on arbitrary input', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 300 }), fc.string({ maxLength: 50, unit: fc.constantFrom('a', ' ', '1') }), (junk, words) => {
        const out = htmlToText(`${junk}<p class="x">${words}</p>`);
        assert.equal(typeof out, 'string');
        assert.ok(!out.includes('<p class="x">'));
      }),
      { numRuns: 300 },
    );
  });

  it('handles hostile input in linear time', () => {
    const n = 200_000;
    for (const html of [
      '<'.repeat(n),
      '<a '.repeat(n / 3),
      '<div style="display:none">'.repeat(n / 26),
      '&'.repeat(n) + '&#' + '9'.repeat(n),
      ' \t'.repeat(n) + 'x',
      '<!--'.repeat(n / 4),
      '<style>' + '</styl'.repeat(n / 6),
      '<td>'.repeat(n / 4),
    ]) {
      assert.equal(typeof htmlToText(html), 'string');
    }
  });
});
