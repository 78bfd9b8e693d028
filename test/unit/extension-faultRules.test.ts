// Simulate Failures…'s presets and the status-bar mark's watch (docs/chaos.md, "In the editor"),
// without an editor: every preset makes a rule the server's own rule set accepts (the editor keeps
// no second copy of the rules' checks), and the watch, against the real local server, counts rules
// added by anyone and drops a rule when its time to live ends, without being asked.
import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createClient } from '../../src/api/client';
import type { InboxApi } from '../../src/api/types';
import { FaultRulesWatch } from '../../src/extension/chaos/watch';
import { PRESETS } from '../../src/extension/chaos/presets';
import { APPLIED_SURFACES, ChaosRules } from '../../src/server/chaos/rules';
import { startInboxServer, type InboxServer } from '../../src/server/server';
import { Emitter } from '../../src/extension/util/emitter';
import { memoryLog } from '../support/memory';

const API_TOKEN = 'faults-api-token-0001';

/** An answer each question accepts: its starting value, its first choice, or a sample. */
function sampleAnswer(q: (typeof PRESETS)[number]['questions'][number]): string {
  const a = q.value ?? q.choices?.[0].value ?? (q.key === 'recipient' ? 'joe@inbox.test' : '1');
  assert.equal(q.validate(a), undefined, `${q.key}: ${a}`);
  return a;
}

describe('Simulate Failures presets', () => {
  it('make rules the server accepts, for every preset and every provider', async () => {
    const rules = new ChaosRules(Date.now, APPLIED_SURFACES);
    for (const p of PRESETS) {
      const answers = Object.fromEntries(p.questions.map((q) => [q.key, sampleAnswer(q)]));
      await rules.add(p.rule(answers));
      for (const q of p.questions.filter((x) => x.choices)) for (const c of q.choices!) await rules.add(p.rule({ ...answers, [q.key]: c.value }));
      // A blank optional recipient is "all": true.
      if (p.questions.some((q) => q.key === 'recipient' && q.validate('') === undefined)) {
        const blank = p.rule({ ...answers, recipient: '' });
        assert.equal((blank.match as { all?: unknown }).all, true, p.id);
        assert.equal((blank.match as { recipient?: unknown }).recipient, undefined, p.id);
        await rules.add(blank);
      }
    }
  });

  it('check only the shape of an answer: a number where a count goes', () => {
    const grey = PRESETS.find((p) => p.id === 'greylisting')!;
    const times = grey.questions.find((q) => q.key === 'times')!;
    assert.match(times.validate('abc') ?? '', /whole number/);
    assert.match(times.validate('0') ?? '', /whole number/);
    assert.equal(times.validate('3'), undefined);
  });
});

describe('the fault-rules watch', function () {
  this.timeout(20_000);
  let dir: string;
  let server: InboxServer;
  let api: InboxApi;
  let watch: FaultRulesWatch | undefined;

  before(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'faults-watch-'));
    server = await startInboxServer({ host: '127.0.0.1', httpPort: 0, smtpPort: 0, dataDir: dir, apiToken: API_TOKEN, webhookToken: 'faults-wh-token-0002', defaultDomain: 'inbox.test' });
    api = createClient({ baseUrl: server.httpUrl, apiToken: API_TOKEN });
  });

  after(async () => {
    watch?.dispose();
    await server.close();
    await fs.rm(dir, { recursive: true, force: true });
  });

  it('reads the rules when the connection is ready and after a refresh, and drops a rule when its time to live ends', async () => {
    const changes = new Emitter<void>();
    let connected = false;
    watch = new FaultRulesWatch({ get testInbox() { return connected ? {} : undefined; }, current: () => (connected ? api : undefined), onDidChangeState: (l) => changes.event(l) }, memoryLog().log);
    const seen: number[] = [];
    watch.onDidChange((rules) => seen.push(rules.length));

    await api.addChaosRule({ surface: 'resend', match: { all: true }, fault: { status: 429 }, ttl: '3s' });
    await watch.refresh();
    assert.equal(watch.rules.length, 0, 'not connected: nothing read');

    connected = true;
    changes.fire();
    await waitUntil(() => watch!.rules.length === 1, 'the rule read on connection');
    await api.addChaosRule({ surface: 'smtp', match: { all: true, stage: 'connect' }, fault: { drop: true }, ttl: '10m' });
    await watch.refresh();
    assert.equal(watch.rules.length, 2);
    // No refresh, and before the next poll (5 s): the soonest expiry brings a read.
    await waitUntil(() => watch!.rules.length === 1, 'the expired rule gone', 4_500);
    assert.deepEqual(seen, [1, 2, 1]);
  });
});

async function waitUntil(cond: () => boolean, what: string, ms = 3_000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}
