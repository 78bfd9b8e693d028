// Webhook delivery (docs/api.md §4.5): `POST /api/v2/domains/<token>/webhook[/<inbox>]`, or with the
// token in `?whtoken=` and the domain in the path. Takes the webhook token, never the API token.
import { checkToken } from '../auth';
import { HttpError, badRequest } from '../errors';
import { readInjectedMessage } from '../body';
import type { Route } from '../routes';
import { type ApiContext, type Query, type Req, type Res, readDomain, readInbox } from './context';
import { deliver } from './inboxes';

export async function receiveWebhook(ctx: ApiContext, req: Req, res: Res, route: Extract<Route, { kind: 'webhook' }>, query: Query): Promise<void> {
  // With ?whtoken= the first segment is the domain (`private` or a name); without, it is the token.
  const queryToken = query.get('whtoken');
  const tokenInQuery = queryToken !== null;
  const candidate = tokenInQuery ? queryToken : route.first;
  const outcome = checkToken(ctx.webhookToken, candidate);
  if (outcome === 'missing') throw new HttpError(401, 'unauthorized', 'missing webhook token: put it in the path or in ?whtoken=');
  if (outcome === 'wrong') throw new HttpError(403, 'forbidden', 'wrong webhook token (webhook routes take the webhook token, never the API token)');
  const domain = tokenInQuery ? (readDomain(route.first) ?? ctx.defaultDomain) : ctx.defaultDomain;
  // Rule 3: an inbox in the path overrides `to`.
  const pathInbox = route.inbox === undefined ? undefined : readInbox(route.inbox, false);
  const msg = await readInjectedMessage(req, ctx.maxBody);
  let inbox = pathInbox;
  if (inbox === undefined) {
    // Rules 1 and 2: the inbox named by `to` (an inbox name, or an address whose local part is used).
    if (msg.to === undefined || msg.to.trim() === '') throw badRequest('bad_field', 'no inbox: name it in the path or in the "to" field');
    const to = msg.to.trim();
    const at = to.lastIndexOf('@');
    inbox = readInbox(at > 0 ? to.slice(0, at) : to, false, 'field "to"');
  }
  await deliver(ctx, res, domain, inbox, msg, 'webhook');
}
