// Reading a stored message's bytes for an HTTP request: the one path every read view, the link
// route and the search take. A read first holds its share of the
// read budget (a ByteBudget of its own, budget.ts, so that reads never hold back SMTP and HTTP
// intake) for the life of its request: however many clients read big messages at once, the
// bytes in memory stay bounded; a message larger than the whole budget is read alone, and so is
// always readable whole. A client that leaves while it waits leaves
// the queue; one that leaves later gives its share back when its response closes.
import type { Release } from '../../budget';
import type { MessageMeta } from '../../store/types';
import type { ApiContext } from './context';

/** A read that only sends the bytes (raw): the buffer itself. */
export const RAW_COST = 1;
/**
 * A read that parses the message on a MIME worker: the buffer, the worker's copy of it, what the
 * parser makes of it (decoded parts, text) and the answer cloned back. Measured on a 20 MB
 * message with one attachment: about 3x its size at the peak; 4x leaves a margin.
 */
export const PARSE_COST = 4;

export interface HeldMessage {
  raw: Buffer;
  /** Gives the budget back before the request ends (a scan that moves on to the next message). */
  release: Release;
}

/**
 * The bytes of `meta`, once `cost` times its size is held of the read budget for `lifetime`
 * (the request: responseLifetime(res), or a signal that ends no later). Rejects BudgetError
 * GONE when `lifetime` ends while it waits, CLOSED when the server stops.
 */
export async function readHeld(ctx: ApiContext, meta: MessageMeta, lifetime: AbortSignal, cost: number): Promise<HeldMessage> {
  const release = await ctx.readBudget.take(meta.size * cost, lifetime);
  try {
    return { raw: await ctx.store.readRaw(meta.id), release };
  } catch (e) {
    release();
    throw e;
  }
}
