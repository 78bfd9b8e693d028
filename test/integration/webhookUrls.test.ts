// Copy Webhook URL… as a user runs it from the palette, in a real extension host: all four
// forms of docs/api.md §4.5 are offered, the inbox or the domain a form needs is asked for with
// a picker, and a POST to each copied URL delivers to the embedded local server.
import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import { DEFAULT_DOMAIN } from '../../src/shared/contract';
import { answering, clipboard, messageLabels, uniqueInbox, useLocalServer, waitForState } from './support/state';

const DOMAIN = DEFAULT_DOMAIN;

/** What a copied URL names, read back from its shape. */
function shapeOf(url: string, base: string): { form: string; inbox?: string; domain?: string } {
  const rest = url.slice(`${base}/api/v2/domains/`.length);
  let m = /^private\/webhook\/\?whtoken=[^&]+$/.exec(rest);
  if (m) return { form: 'privateQuery' };
  m = /^private\/webhook\/([^/?]+)\?whtoken=[^&]+$/.exec(rest);
  if (m) return { form: 'privateInboxQuery', inbox: decodeURIComponent(m[1]) };
  m = /^([^/]+)\/webhook\/\?whtoken=[^&]+$/.exec(rest);
  if (m) return { form: 'namedDomain', domain: decodeURIComponent(m[1]) };
  m = /^[^/]+\/webhook\/([^/?]+)\/$/.exec(rest);
  if (m) return { form: 'tokenInPath', inbox: decodeURIComponent(m[1]) };
  throw new Error(`not a webhook URL form: ${url}`);
}

describe('Copy Webhook URL from the palette', function () {
  this.timeout(90_000);
  let baseUrl: string;
  let seeded: string;

  before(async () => {
    baseUrl = (await useLocalServer()).connection.baseUrl;
    // An inbox the inbox picker can offer.
    seeded = uniqueInbox('hook-seed');
    await vscode.commands.executeCommand('testInbox.injectMessage', { domain: DOMAIN, inbox: seeded, subject: 'seed', text: 's' });
    await waitForState((s) => messageLabels(s.tree, DOMAIN, seeded).includes('seed'), 'the seeded inbox in the tree');
  });

  it('offers all four forms, asks for the inbox or domain a form needs, and each copied URL delivers', async () => {
    const forms = new Set<string>();
    for (let pick = 0; pick < 4; pick++) {
      // The same answer for every quick input the command opens: the form, then the inbox or domain.
      const url = await answering(vscode.commands.executeCommand<string>('testInbox.copyWebhookUrl'), { next: pick });
      assert.ok(url, `form ${pick} copied a URL`);
      assert.equal(await clipboard(), url);
      const shape = shapeOf(url, baseUrl);
      forms.add(shape.form);
      const to = uniqueInbox('hook-to');
      const subject = `via ${shape.form}`;
      const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ to, subject, text: 'Your code is 246810' }) });
      assert.equal(res.status, 200, `${shape.form}: ${await res.clone().text()}`);
      const body = (await res.json()) as { status: string; id: string };
      assert.equal(body.status, 'ok');
      // An inbox in the path wins over "to" (§4.5 rule 3); the named domain is where it lands.
      const inbox = shape.inbox ?? to;
      const domain = shape.domain ?? DOMAIN;
      assert.ok(body.id.startsWith(`${inbox}-`), `${shape.form} delivered to ${inbox}: ${body.id}`);
      await waitForState((s) => messageLabels(s.tree, domain, inbox).includes(subject), `the message sent to ${shape.form}`);
    }
    assert.deepEqual([...forms].sort(), ['namedDomain', 'privateInboxQuery', 'privateQuery', 'tokenInPath']);
  });

  it('from an inbox row, a form that needs a domain asks for it; dismissing the picker copies nothing', async () => {
    await vscode.env.clipboard.writeText('unchanged');
    const r = await answering(vscode.commands.executeCommand<string>('testInbox.copyWebhookUrl', { domain: 'private', form: 'namedDomain' }), 'close');
    assert.equal(r, undefined);
    assert.equal(await clipboard(), 'unchanged');
  });

  it('refuses a form name that does not exist, naming the forms', async () => {
    await vscode.env.clipboard.writeText('unchanged');
    assert.equal(await vscode.commands.executeCommand('testInbox.copyWebhookUrl', { form: 'bogus' }), undefined);
    assert.equal(await clipboard(), 'unchanged');
    const st = await waitForState((s) => s.shown.some((x) => x.where === 'error' && /bogus/.test(x.text)), 'the error message');
    assert.match(st.shown.filter((x) => x.where === 'error').pop()!.text, /tokenInPath, namedDomain, privateQuery, privateInboxQuery/);
  });
});
