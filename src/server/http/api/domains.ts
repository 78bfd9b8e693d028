// `GET /api/v2/domains`: the domains the store holds, with inbox and message counts, and the
// server's default domain (the web UI shows it first).
import type { DomainsResponse } from '../../../core/wire';
import { sendJson } from '../respond';
import type { ApiContext, Res } from './context';

export async function listDomains(ctx: ApiContext, res: Res): Promise<void> {
  const body: DomainsResponse = { domains: await ctx.store.domains(), defaultDomain: ctx.defaultDomain };
  sendJson(res, 200, body);
}
