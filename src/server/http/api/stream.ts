// `GET /api/v2/domains/<D>/stream[/<inbox>]`: hands the response to the stream hub (../stream.ts).
import type { Route } from '../routes';
import { type ApiContext, type Res, readDomain, readInbox } from './context';

export function openStream(ctx: ApiContext, res: Res, route: Extract<Route, { kind: 'stream' }>): void {
  const domain = readDomain(route.domain);
  const inbox = route.inbox === undefined ? undefined : readInbox(route.inbox, true);
  ctx.hub.open(res, { domain, inbox });
}
