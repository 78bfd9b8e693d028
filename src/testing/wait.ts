// waitForCode / waitForLink: the client's one wait (api/queries.ts findCode / findLink) with the
// library's options and errors. Towards a Test Inbox server it long-polls the code and link
// routes (the server answers with core/message.ts); towards a hosted service it lists, reads and
// picks with the same functions. `since: 'now'` is the server's time.
import { findCode, findLink, type Found, type FindOptions } from '../api/queries';
import { isLinkKindParam, LINK_KINDS, type LinkKindParam } from '../core/clickKinds';
import { inboxLabel } from '../core/ids';
import { type Connection, splitInbox, timeoutMs, toTestInboxError } from './connection';
import { type CodeResult, type LinkKindOption, type LinkResult, type LinkOptions, TestInboxError, type WaitOptions } from './types';

/** The library's public kind names are the core's (types.ts is self-contained, so the equality is checked here). */
const sameKinds: [LinkKindOption, LinkKindParam] extends [LinkKindParam, LinkKindOption] ? true : never = true;
void sameKinds;

/** Internal: the client's clock, which only deadlines read (tests skew it). */
export interface WaitClock {
  clock?: () => number;
}

export function waitForCodeOn(conn: Connection, address: string, o: WaitOptions & WaitClock): Promise<CodeResult> {
  return waitOn(conn, address, o, 'a one-time code', async (f) => {
    const r = await findCode(f);
    return r && { code: r.value, ...meta(r) };
  });
}

export function waitForLinkOn(conn: Connection, address: string, o: LinkOptions & WaitClock): Promise<LinkResult> {
  const kind = o.kind ?? 'any';
  if (!isLinkKindParam(kind)) throw new TestInboxError('bad_input', `kind must be one of ${Object.keys(LINK_KINDS).join(', ')} (got ${JSON.stringify(kind)})`);
  return waitOn(conn, address, o, `a ${kind} link`, async (f) => {
    const r = await findLink({ ...f, kind });
    return r && { url: r.value.url, kind: r.value.kind, text: r.value.text ?? '', ...meta(r) };
  });
}

function meta(r: Found<unknown>): { id: string; time: number; subject: string; from: string } {
  return { id: r.id, time: r.time, subject: r.subject, from: r.from };
}

async function waitOn<R>(conn: Connection, address: string, o: WaitOptions & WaitClock, what: string, run: (f: FindOptions) => Promise<R | undefined>): Promise<R> {
  const budget = timeoutMs(o.timeout);
  const { inbox, domain } = splitInbox(address, conn.domain);
  let found: R | undefined;
  try {
    found = await run({ api: conn.api, domain, inbox, testInbox: await conn.isTestInbox(), signal: o.signal, since: o.since, waitMs: budget, delete: o.delete === true, clock: o.clock });
  } catch (e) {
    throw toTestInboxError(e);
  }
  if (found !== undefined) return found;
  const since = o.since;
  const after = since === undefined ? '' : since === 'now' ? ' after the call' : since instanceof Date || typeof since === 'number' || /^[0-9]+$/.test(since) ? ` after ${new Date(since instanceof Date ? since.getTime() : Number(since)).toISOString()}` : ` after message ${since}`;
  throw new TestInboxError('timeout', `no message with ${what} arrived in ${inboxLabel(inbox, domain)}${after} within ${Math.round(budget / 100) / 10} s`);
}
