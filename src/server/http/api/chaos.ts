// Failures on demand (docs/chaos.md): the fault rules over HTTP, for the API token only.
//   GET    /api/v2/chaos             the set, with counters
//   PUT    /api/v2/chaos             replaces the set (a JSON array of rules, or {"rules": […]})
//   DELETE /api/v2/chaos             clears it
//   GET    /api/v2/chaos/rules       the same list as GET /api/v2/chaos
//   POST   /api/v2/chaos/rules       adds one rule, answers its id
//   GET    /api/v2/chaos/rules/{id}  one rule
//   DELETE /api/v2/chaos/rules/{id}  removes it
// httpApi.ts reaches this only after the API token's check: neither the web UI's session routes
// nor /mcp's in-process calls come here (its tools stay read-only).
import { canStillFire, ChaosRuleError, type ChaosRules, ruleView } from '../../chaos/rules';
import { parseJsonObject, parseJsonObjectOrArray, readBody, requireJson, type BodyLimits } from '../body';
import { HttpError, badRequest, notFound } from '../errors';
import { sendJson } from '../respond';
import type { Route } from '../routes';
import type { Req, Res } from './context';

type ChaosRoute = Extract<Route, { kind: 'chaos' | 'chaosRules' | 'chaosRule' }>;

export function isChaosRoute(route: Route): route is ChaosRoute {
  return route.kind === 'chaos' || route.kind === 'chaosRules' || route.kind === 'chaosRule';
}

async function listBody(rules: ChaosRules): Promise<{ status: 'ok'; active: number; rules: ReturnType<typeof ruleView>[] }> {
  const list = (await rules.list()).map(ruleView);
  return { status: 'ok', active: list.filter(canStillFire).length, rules: list };
}

/** A refused rule is a 400 that names the field; nothing of the set changes. */
async function checked<T>(f: () => Promise<T>): Promise<T> {
  try {
    return await f();
  } catch (e) {
    if (ChaosRuleError.is(e)) throw badRequest('bad_field', e.message);
    throw e;
  }
}

/** What the server's log says after each change: the number of active rules. */
export function activeRulesLine(n: number): string {
  return `failures on demand: ${n} fault rule${n === 1 ? '' : 's'} active (GET /api/v2/chaos; docs/chaos.md)`;
}

export async function chaosResource(rules: ChaosRules, limits: BodyLimits, req: Req, res: Res, route: ChaosRoute, method: string, note: (line: string) => void): Promise<void> {
  if (method !== 'GET') {
    res.once('finish', () => {
      if (res.statusCode < 300) note(activeRulesLine(rules.size));
    });
  }
  if (route.kind === 'chaosRule') {
    const rule = (await rules.list()).find((r) => r.id === route.id);
    if (!rule) throw notFound(`no fault rule ${JSON.stringify(route.id.slice(0, 40))} (it was removed, or its time to live ended)`);
    if (method === 'GET') return sendJson(res, 200, { status: 'ok', rule: ruleView(rule) });
    await rules.remove(rule.id);
    return sendJson(res, 200, { status: 'ok', removed: rule.id, active: rules.size });
  }
  if (method === 'GET') return sendJson(res, 200, await listBody(rules));
  if (route.kind === 'chaosRules') {
    requireJson(req);
    const input = parseJsonObject(await readBody(req, res, limits));
    const rule = await checked(() => rules.add(input));
    return sendJson(res, 201, { status: 'ok', id: rule.id, rule: ruleView(rule), active: rules.size });
  }
  if (method === 'DELETE') {
    const removed = await rules.clear();
    return sendJson(res, 200, { status: 'ok', removed, active: 0 });
  }
  requireJson(req);
  const body = parseJsonObjectOrArray(await readBody(req, res, limits));
  const inputs = Array.isArray(body) ? body : body.rules;
  if (!Array.isArray(inputs)) throw new HttpError(400, 'bad_field', 'send the rule set as a JSON array of rules, or as {"rules": […]}');
  await checked(() => rules.replace(inputs));
  return sendJson(res, 200, await listBody(rules));
}
