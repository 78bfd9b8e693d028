// `GET /api/v2/domains`: the domains the store holds, with inbox and message counts.
import type { DomainsResponse } from '../../../core/wire';
import { sendJson } from '../respond';
import type { ApiContext, Res } from './context';

export async function listDomains(ctx: ApiContext, res: Res): Promise<void> {
  const body: DomainsResponse = { domains: await ctx.store.domains() };
  sendJson(res, 200, body);
}
