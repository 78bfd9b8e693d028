import assert from 'node:assert/strict';
import { frameCsp, viewCsp } from '../../src/core/csp';

/** A policy as directive → sources. */
function directives(csp: string): Map<string, string> {
  return new Map(csp.split(';').map((d) => d.trim().split(/\s+/)).map(([k, ...v]) => [k, v.join(' ')]));
}

describe('core/csp: one policy rule for the message view in both hosts', () => {
  it('the panel and the page differ only in their source, what they fetch and framing; scripts by nonce alone in both', () => {
    const panel = directives(viewCsp({ source: 'vscode-webview://x', nonce: 'n1', remoteImages: false }));
    const page = directives(viewCsp({ source: "'self'", nonce: 'n2', remoteImages: true, connect: true, header: true }));
    for (const d of [panel, page]) {
      assert.equal(d.get('default-src'), "'none'");
      assert.match(d.get('script-src') ?? '', /^'nonce-n[12]'$/);
      assert.equal(d.get('frame-src'), "'none'");
      assert.equal(d.get('form-action'), "'none'");
      assert.equal(d.get('base-uri'), "'none'");
    }
    assert.equal(panel.get('img-src'), 'vscode-webview://x data:');
    assert.equal(page.get('img-src'), "'self' data: https: http:");
    assert.equal(panel.has('connect-src'), false);
    assert.equal(page.get('connect-src'), "'self'");
    assert.equal(page.get('frame-ancestors'), "'none'");
    assert.equal(panel.has('frame-ancestors'), false, 'a meta policy cannot say frame-ancestors');
  });

  it("the message's frame allows remote images only when the message may load them", () => {
    assert.doesNotMatch(frameCsp(false), /https?:/);
    assert.match(directives(frameCsp(true)).get('img-src') ?? '', /^data: cid: https: http:$/);
    assert.equal(directives(frameCsp(false)).get('default-src'), "'none'");
  });
});
