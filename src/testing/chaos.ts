// Failures on demand from a test (docs/chaos.md): `chaos(rule)` adds fault rules to a Test Inbox
// server and answers a handle that removes only its own, so tests running in parallel against one
// server never undo each other's rules. The server checks every rule (/api/v2/chaos/rules).
import { ApiError } from '../api/errors';
import type { Connection } from './connection';
import type { ChaosRule, ChaosRuleState, ChaosRules, ConnectionOptions } from './types';
import { TestInboxError } from './types';

/** Runs `run` on a connection of its own, closed after it; failures as TestInboxError (index.ts withConnection). */
type WithConnection = <T>(o: ConnectionOptions | undefined, run: (c: Connection) => Promise<T>) => Promise<T>;

/** Removes the rules of `ids`, each one already gone counting as removed. */
async function removeAll(c: Connection, ids: readonly string[], signal: AbortSignal | undefined): Promise<void> {
  for (const id of ids) {
    await c.api.removeChaosRule(id, { signal }).catch((e: unknown) => {
      if (!ApiError.is(e, 'not_found')) throw e;
    });
  }
}

/** Adds `rules` (one or several) on the connection; all or none: when the server refuses one, those added before it are removed. */
export async function addChaosOn(c: Connection, rules: ChaosRule | readonly ChaosRule[], options: ConnectionOptions, withConnection: WithConnection): Promise<ChaosRules> {
  const list = Array.isArray(rules) ? (rules as readonly ChaosRule[]) : [rules as ChaosRule];
  if (list.length === 0) throw new TestInboxError('bad_input', 'give at least one rule');
  const id = await c.api.identify({ signal: options.signal });
  if (id.kind !== 'test-inbox') throw new TestInboxError('unsupported', `${c.baseUrl} is not a Test Inbox server: a hosted service has no fault rules`);
  const ids: string[] = [];
  try {
    for (const rule of list) ids.push((await c.api.addChaosRule(rule as unknown as Record<string, unknown>, { signal: options.signal })).id);
  } catch (e) {
    await removeAll(c, ids, undefined).catch(() => undefined);
    throw e;
  }
  return {
    ids,
    state: () =>
      withConnection(options, async (conn) => {
        const own = new Set(ids);
        return (await conn.api.chaosRules({ signal: options.signal })).rules.filter((r) => own.has(r.id)) as unknown as ChaosRuleState[];
      }),
    remove: () => withConnection(options, (conn) => removeAll(conn, ids, options.signal)),
  };
}
