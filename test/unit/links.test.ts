import assert from 'node:assert/strict';
import fc from 'fast-check';
import { extractLinks } from '../../src/core/links';

describe('extractLinks', () => {
  it('lists HTML anchors with their visible text in document order', () => {
    const html = `<p>Hi,</p><p><a href="https://app.example.com/verify?t=abc" style="color:#1a73e8">Verify
      <b>your email</b></a></p><p>Then <a href='https://example.com/start'>get started</a>.</p>`;
    assert.deepEqual(extractLinks({ html }), [
      { url: 'https://app.example.com/verify?t=abc', text: 'Verify your email' },
      { url: 'https://example.com/start', text: 'get started' },
    ]);
  });

  it('decodes HTML entities in hrefs', () => {
    const html = '<a href="https://example.com/confirm?user=42&amp;token=x%2Fy&#38;lang=de&#x26;r=1">Confirm</a>';
    assert.deepEqual(extractLinks({ html }), [{ url: 'https://example.com/confirm?user=42&token=x%2Fy&lang=de&r=1', text: 'Confirm' }]);
  });

  it('does not decode a legacy entity name that is part of a query, as browsers do', () => {
    const html = '<a href="https://example.com/p?a=1&copy=2&reg=3">x</a>';
    assert.equal(extractLinks({ html })[0].url, 'https://example.com/p?a=1&copy=2&reg=3');
  });

  it('keeps only absolute http and https links', () => {
    const html = `<a href="mailto:help@example.com">mail</a><a href="tel:+15551234567">call</a>
      <a href="javascript:alert(1)">js</a><a href="/relative/path">rel</a><a href="#top">top</a>
      <a href="//cdn.example.com/x">proto-relative</a><a href="ftp://example.com/f">ftp</a>
      <a>no href</a><a href="HTTPS://Example.com/Up">upper</a><a href="http://plain.example.org">plain</a>`;
    assert.deepEqual(extractLinks({ html }).map((l) => l.url), ['HTTPS://Example.com/Up', 'http://plain.example.org']);
  });

  it('still lists unsubscribe and tracking links', () => {
    const html = `<a href="https://click.mail.example.com/ls/click?upn=3D7f9a8b6c5d&amp;utm_source=email">Open</a>
      <a href="https://example.com/unsubscribe?u=123456&amp;list=9">Unsubscribe</a>
      <img src="https://open.example.com/o.gif?id=123" width="1" height="1" alt="">`;
    assert.deepEqual(extractLinks({ html }).map((l) => l.text), ['Open', 'Unsubscribe']);
  });

  it('deduplicates: the first occurrence wins, including equivalent spellings', () => {
    const html = '<a href="https://example.com">Home</a><a href="https://EXAMPLE.com/">Home again</a><a href="https://example.com/a">A</a>';
    const text = 'Home: https://example.com/ and https://example.com/a and https://example.com/b';
    assert.deepEqual(extractLinks({ html, text }), [
      { url: 'https://example.com', text: 'Home' },
      { url: 'https://example.com/a', text: 'A' },
      { url: 'https://example.com/b' },
    ]);
  });

  it('finds a bare URL in HTML text whole when references are written inside it', () => {
    assert.deepEqual(extractLinks({ html: '<p>Open https://x.example/c?a=1&amp;b=2&#38;c=3 now</p>' }), [{ url: 'https://x.example/c?a=1&b=2&c=3' }]);
  });

  it('puts HTML links first, then links found only in the text part', () => {
    const links = extractLinks({ text: 'See https://text-only.example.com/x and https://both.example.com', html: '<a href="https://both.example.com">both</a>' });
    assert.deepEqual(links, [{ url: 'https://both.example.com', text: 'both' }, { url: 'https://text-only.example.com/x' }]);
  });

  it('finds URLs in plain text without trailing punctuation or unbalanced brackets', () => {
    const text = [
      'Reset here: https://example.com/reset?token=abc123.',
      'Docs (https://docs.example.com/guide) are online,',
      'wiki https://en.wikipedia.org/wiki/Foo_(bar), then',
      '<https://angle.example.com/path> and "https://quoted.example.com/q".',
      '确认链接：https://example.cn/verify?c=1。谢谢',
    ].join('\n');
    assert.deepEqual(extractLinks({ text }).map((l) => l.url), [
      'https://example.com/reset?token=abc123',
      'https://docs.example.com/guide',
      'https://en.wikipedia.org/wiki/Foo_(bar)',
      'https://angle.example.com/path',
      'https://quoted.example.com/q',
      'https://example.cn/verify?c=1',
    ]);
  });

  it('finds bare URLs in HTML text but not in styles, scripts, titles or comments', () => {
    const html = `<html><head><title>https://title.example.com</title>
      <style>@import url(https://fonts.example.com/css);</style></head>
      <body><!-- https://comment.example.com --><script>var u="https://script.example.com"</script>
      <p>Or paste this link: https://bare.example.com/confirm?x=1</p></body></html>`;
    assert.deepEqual(extractLinks({ html }), [{ url: 'https://bare.example.com/confirm?x=1' }]);
  });

  it('uses the image alt text for an image-only link and omits text when there is none', () => {
    const html = '<a href="https://example.com/a"><img src="logo.png" alt="Acme logo"></a><a href="https://example.com/b"><img src="x.png"></a>';
    assert.deepEqual(extractLinks({ html }), [{ url: 'https://example.com/a', text: 'Acme logo' }, { url: 'https://example.com/b' }]);
  });

  it('strips the whitespace browsers ignore from hrefs', () => {
    const html = '<a href="  https://example.com/long\n/path\t?q=1 ">x</a>';
    assert.equal(extractLinks({ html })[0].url, 'https://example.com/long/path?q=1');
  });

  it('returns an empty list for empty or link-free input', () => {
    assert.deepEqual(extractLinks({}), []);
    assert.deepEqual(extractLinks({ text: '', html: '' }), []);
    assert.deepEqual(extractLinks({ text: 'no links here, just http:// and https://' }), []);
  });

  it('survives unclosed anchors and broken markup', () => {
    const html = '<a href="https://one.example.com">one <a href="https://two.example.com">two <p>para';
    assert.deepEqual(extractLinks({ html }), [
      { url: 'https://one.example.com', text: 'one' },
      { url: 'https://two.example.com', text: 'two para' },
    ]);
  });

  it('handles hostile input in linear time (no catastrophic backtracking)', () => {
    // Each of these would take minutes with a backtracking regex over the whole input.
    const big = 200_000;
    const inputs = [
      'https://' + 'a'.repeat(big) + ' ',
      'http://'.repeat(big / 7),
      '<a href="https://x.example.com/' + '('.repeat(big) + '">',
      '<'.repeat(big) + 'a href=https://y.example.com>y</a>',
      ('https://e.example.com/' + ')'.repeat(50) + '.').repeat(2_000),
    ];
    for (const html of inputs) {
      const links = extractLinks({ html, text: html });
      assert.ok(Array.isArray(links));
    }
  });

  it('never throws and only returns absolute http(s) URLs on arbitrary input', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 400 }), fc.string({ maxLength: 400 }), (text, html) => {
        for (const link of extractLinks({ text, html })) {
          assert.match(link.url, /^https?:\/\//i);
          new URL(link.url);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('finds a URL placed anywhere in text, whatever surrounds it', () => {
    // URL path and query characters (RFC 3986 pchar and query); fc.webPath() is slow to generate.
    const pchar = fc.constantFrom(...'abcXYZ019-._~%!$&\'*+,;=:@'.split(''));
    const urlPath = fc
      .tuple(fc.array(fc.string({ unit: pchar, maxLength: 10 }), { maxLength: 4 }), fc.option(fc.string({ unit: pchar, maxLength: 20 })))
      .map(([segments, query]) => segments.map((x) => `/${x}`).join('') + (query === null ? '' : `?${query}`));
    fc.assert(
      fc.property(
        fc.constantFrom('', 'Click ', 'Hi\n', '(', 'Link: ', '链接：'),
        urlPath,
        fc.constantFrom('', ' ', '.', ')', '\n', '。'),
        (before, path, after) => {
          // Brackets make the end ambiguous (`/(` + `)`), covered by the example test above.
          const url = `https://example.com${path.replace(/[()[\]{}]/g, '').replace(/[.,;:!?'*]+$/, '')}`;
          const links = extractLinks({ text: `${before}${url}${after}` });
          assert.equal(links[0]?.url, url);
        },
      ),
      { numRuns: 300 },
    );
  });
});
