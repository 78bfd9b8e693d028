// What the one body reader (body.ts readBody) knows of a request: whether it has proven a
// credential yet, and what its route (table.ts) lets it read before that. Every credential
// check calls prove() when the credential holds; until then a body is read only within the
// route's declared allowance, from a small pool of its own (never the shared byte budget), so
// a client that has proven nothing can never hold back SMTP and HTTP intake. A request the
// router did not record, or a route that declares no allowance, reads no body before its
// credential: the reader fails closed.
import type { IncomingMessage } from 'node:http';
import type { ByteBudget } from '../budget';

/** What a request may read before its credential is proven. */
export interface Unproven {
  /** Body bytes (the route's declaration; 0: none). */
  readonly bytes: number;
  /** Where those bytes are held: the pool of not-yet-proven bodies, never the shared budget. */
  readonly pool?: ByteBudget;
}

interface Exchange {
  proven: boolean;
  readonly unproven: Unproven;
}

const exchanges = new WeakMap<IncomingMessage, Exchange>();
const NOTHING: Unproven = { bytes: 0 };

/** Records a request the router matched: nothing is proven yet. */
export function beginExchange(req: IncomingMessage, unproven: Unproven): void {
  exchanges.set(req, { proven: false, unproven });
}

/** Records that the request's credential holds: its body may now be read within the shared budget. */
export function prove(req: IncomingMessage): void {
  const ex = exchanges.get(req);
  if (ex) ex.proven = true;
  else exchanges.set(req, { proven: true, unproven: NOTHING });
}

/** What the request may read while its credential is unproven; undefined once proven. */
export function unprovenAllowance(req: IncomingMessage): Unproven | undefined {
  const ex = exchanges.get(req);
  if (ex?.proven) return undefined;
  return ex?.unproven ?? NOTHING;
}
