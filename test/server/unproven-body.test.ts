// G1 (issue 35): a request that has proven no credential holds none of the shared byte budget,
// and every grant ends when its socket ends, whatever the client does.
// - Forty token-less `POST /ui/session` that declare 1 MiB and send one byte took 40 MiB of the
//   32 MiB budget that SMTP and HTTP intake share: intake stopped while their sockets stayed.
// - The 408 at the request timeout ended the server's side of each socket; the grant waited
//   for the response's `close`, which never came while the client kept its side open.
import assert from 'node:assert/strict';
import { ByteBudget } from '../../src/server/budget';
import { API_TOKEN, startApi, type Harness } from './api-harness';
import { type Stalled, stalledRequest as open, until } from '../support/stalledRequest';

const MIB = 1024 * 1024;

describe('G1: bodies before a credential, and grants that outlive their socket', function () {
  this.timeout(60_000);
  let h: Harness;
  let budget: ByteBudget;
  const sockets: Stalled[] = [];
  const stalledRequest = async (...args: Parameters<typeof open>): Promise<Stalled> => {
    const s = await open(...args);
    sockets.push(s);
    return s;
  };

  beforeEach(async () => {
    budget = new ByteBudget();
    h = await startApi({ budget, requestTimeoutMs: 1_500, headersTimeoutMs: 1_000 });
  });
  afterEach(async () => {
    for (const s of sockets.splice(0)) s.socket.destroy();
    await h.close();
  });

  it('forty token-less sign-ins declaring 1 MiB and sending one byte hold none of the shared budget; an inject goes through meanwhile', async () => {
    const signIns = await Promise.all(Array.from({ length: 40 }, () => stalledRequest(h.port, 'POST', '/ui/session', { declare: MIB, send: 1 })));
    // Each is answered without its body being waited for (413: more than a sign-in reads).
    for (const s of signIns) assert.equal(await s.answered(10_000), 413, s.answer());
    assert.equal(budget.inUse, 0, 'the shared budget holds nothing for requests that proved no credential');
    const r = await h.call('POST', '/api/v2/domains/private/inboxes/after/messages', { body: { subject: 'intake goes on', text: 'x' } });
    assert.equal(r.status, 200, r.text);
    for (const s of signIns) s.socket.destroy();
  });

  it('a sign-in within its cap that never finishes holds no shared budget, and is cut at the request timeout', async () => {
    const s = await stalledRequest(h.port, 'POST', '/ui/session', { declare: 1000, send: 1 });
    await until(() => (h.api.unprovenPool.inUse > 0 ? true : undefined), 10_000, () => 'the sign-in body is held in the unproven pool');
    assert.equal(budget.inUse, 0);
    assert.equal(await s.answered(10_000), 408, s.answer());
    await s.closed(h.api.server, 10_000);
    await until(() => (h.api.unprovenPool.inUse === 0 ? true : undefined), 10_000, () => `the unproven pool still holds ${h.api.unprovenPool.inUse} bytes`);
  });

  it('an authenticated body cut by the 408 gives its grant back while the client keeps its side of the socket open', async () => {
    const s = await stalledRequest(h.port, 'POST', '/api/v2/domains/private/inboxes/slow/messages', { declare: MIB, send: 1, headers: { authorization: API_TOKEN } });
    await until(() => (budget.inUse === MIB ? true : undefined), 10_000, () => `the inject holds ${budget.inUse} bytes of the budget, not 1 MiB`);
    assert.equal(await s.answered(10_000), 408, s.answer());
    // The client never ends its side; the grant goes back with the server's side of the socket.
    await until(() => (budget.inUse === 0 ? true : undefined), 10_000, () => `the shared budget still holds ${budget.inUse} bytes after the 408`);
    await s.closed(h.api.server, 10_000);
    assert.equal((await h.call('POST', '/api/v2/domains/private/inboxes/after/messages', { body: { text: 'x' } })).status, 200);
  });
});
