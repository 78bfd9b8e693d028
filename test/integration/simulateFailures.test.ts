// Simulate Failures… in a real extension host against the embedded local server (docs/chaos.md,
// "In the editor"): a preset adds its rule through the API client, the server holds it and
// applies it (the Resend SDK gets its rate-limit error), the status-bar mark counts the rules,
// a rule's time to live ending takes the mark away by itself, the picker's "Clear all failures"
// clears them, and a rule the server refuses is its 400's words in an error notification.
import * as assert from 'node:assert/strict';
import { Resend } from 'resend';
import * as vscode from 'vscode';
import { DEFAULT_DOMAIN } from '../../src/shared/contract';
import { answering, clipboard, debugState, uniqueInbox, useLocalServer, waitForState, type DebugState } from './support/state';

type WithMark = DebugState & { faultRules: { text: string; tooltip: string } | null };
const mark = (s: DebugState) => (s as WithMark).faultRules;

function parseEnv(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const m = /^([A-Z0-9_]+)=(.*)$/.exec(line);
    if (m) out[m[1]] = m[2];
  }
  return out;
}

/** The picker's rows: 8 presets, a separator, Show active rules, Clear all failures. */
const CLEAR_ALL_ROW = 9;

describe('Simulate Failures', function () {
  this.timeout(60_000);
  let baseUrl: string;
  let apiToken: string;

  before(async () => {
    const st = await useLocalServer();
    baseUrl = st.connection.baseUrl;
    await vscode.commands.executeCommand('testInbox.copyApiToken');
    apiToken = await clipboard();
  });

  const rulesOnServer = async (): Promise<{ active: number; rules: Array<{ id: string; surface: string; match: Record<string, unknown>; fault: Record<string, unknown>; fired: number }> }> => {
    const res = await fetch(`${baseUrl}/api/v2/chaos`, { headers: { authorization: apiToken } });
    assert.equal(res.status, 200);
    return (await res.json()) as Awaited<ReturnType<typeof rulesOnServer>>;
  };

  it('the Resend rate-limit preset makes Resend answer 429 for that address; the status-bar mark counts the rule; Clear all failures in the picker takes both away', async () => {
    const inbox = uniqueInbox('chaos');
    const to = `${inbox}@${DEFAULT_DOMAIN}`;
    const added = await vscode.commands.executeCommand<{ id: string }>('testInbox.simulateFailures', { preset: 'providerRateLimit', provider: 'resend', recipient: to, retryAfter: '2' });
    assert.ok(added?.id, 'the command answers the new rule');

    const onServer = await rulesOnServer();
    assert.equal(onServer.active, 1);
    assert.deepEqual(
      onServer.rules.map((r) => ({ id: r.id, surface: r.surface, match: r.match, fault: r.fault })),
      [{ id: added.id, surface: 'resend', match: { recipient: to }, fault: { status: 429, retry_after: 2 } }],
    );

    const st = await waitForState((s) => mark(s) !== null, 'the failure-rules mark');
    assert.equal(mark(st)!.text, '$(debug-disconnect) 1 failure rule');
    assert.match(mark(st)!.tooltip, /resend 429/);

    const env = parseEnv(await vscode.commands.executeCommand<string>('testInbox.copyProviderSettings', 'resend'));
    const resend = new Resend(env.RESEND_API_KEY, { baseUrl: env.RESEND_BASE_URL });
    const { data, error } = await resend.emails.send({ from: 'Acme <no-reply@acme.test>', to, subject: 'Your code is 111222', text: 'Your code is 111222.' });
    assert.equal(data, null);
    assert.equal(error?.name, 'rate_limit_exceeded');
    // Another address is not limited.
    const other = await resend.emails.send({ from: 'Acme <no-reply@acme.test>', to: `${inbox}-other@${DEFAULT_DOMAIN}`, subject: 'Hi', text: 'Hi.' });
    assert.equal(other.error, null);
    assert.equal((await rulesOnServer()).rules[0].fired, 1);

    // A second rule: the mark says 2.
    await vscode.commands.executeCommand('testInbox.simulateFailures', { preset: 'greylisting', recipient: to, times: '1' });
    await waitForState((s) => mark(s)?.text === '$(debug-disconnect) 2 failure rules', 'the mark counting two rules');

    // The picker's last row, as a user picks it.
    const cleared = await answering(vscode.commands.executeCommand<{ removed: number }>('testInbox.simulateFailures'), { next: CLEAR_ALL_ROW });
    assert.deepEqual(cleared, { removed: 2 });
    assert.equal((await rulesOnServer()).active, 0);
    await waitForState((s) => mark(s) === null, 'the mark gone after Clear all failures');
    const sent = await resend.emails.send({ from: 'Acme <no-reply@acme.test>', to, subject: 'Your code is 333444', text: 'Your code is 333444.' });
    assert.equal(sent.error, null);
  });

  it("the mark goes by itself when the last rule's time to live ends", async () => {
    const res = await fetch(`${baseUrl}/api/v2/chaos/rules`, {
      method: 'POST',
      headers: { authorization: apiToken, 'content-type': 'application/json' },
      body: JSON.stringify({ surface: 'sendgrid', match: { all: true }, fault: { status: 503 }, ttl: '8s' }),
    });
    assert.equal(res.status, 201);
    // Its time to live outlasts the watch's poll (5 s), so a poll sees it whenever it was added.
    await waitForState((s) => mark(s)?.text === '$(debug-disconnect) 1 failure rule', 'the mark for a rule added outside the editor');
    await waitForState((s) => mark(s) === null, 'the mark gone when the rule expired', 14_000);
  });

  it("shows the server's 400 for a rule it refuses, and adds nothing", async () => {
    const before = (await debugState()).shown.length;
    const long = `${'x'.repeat(330)}@${DEFAULT_DOMAIN}`;
    const r = await vscode.commands.executeCommand('testInbox.simulateFailures', { preset: 'badRecipient', recipient: long });
    assert.equal(r, undefined);
    const st = await waitForState((s) => s.shown.some((m) => m.where === 'error'), 'the error notification');
    const err = st.shown.slice(-Math.max(1, st.shown.length - before + 1)).find((m) => m.where === 'error');
    assert.match(err!.text, /One bad recipient: the server refused the rule\. .*match\.recipient must be an address/);
    assert.equal((await rulesOnServer()).active, 0);
  });
});
