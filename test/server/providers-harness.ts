// Shared by the provider API tests: a real server (api-harness) with a provider key, and a
// read-back of what a send stored, through the server's own mail API.
import assert from 'node:assert/strict';
import { ManualClock } from '../../src/server/clock';
import { DOMAIN, type Harness, startApi } from './api-harness';

export const PROVIDER_KEY = 'SG.test-provider-key-22ch.aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa';
export { DOMAIN };

export interface ProviderHarness extends Harness {
  clock: ManualClock;
  base: string;
}

export async function startProviders(over: Parameters<typeof startApi>[0] = {}): Promise<ProviderHarness> {
  const clock = new ManualClock();
  const h = await startApi({ providerKey: PROVIDER_KEY, clock, ...over });
  return Object.assign(h, { clock, base: `http://127.0.0.1:${h.port}` });
}

/** 1×1 PNG. */
export const PIXEL = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==', 'base64');

export interface Stored {
  id: string;
  json: { headers: Record<string, string>; subject: string; fromfull: string; parts: Array<{ headers: Record<string, string>; body: string }> };
  raw: string;
  attachments: Array<{ filename: string; 'content-type': string; size: number; attachment_id: number }>;
}

/** The messages of an inbox, newest first, read back through the mail API (message, raw, attachments). */
export async function readInbox(h: Harness, inbox: string, domain = DOMAIN): Promise<Stored[]> {
  const list = await h.call('GET', `/api/v2/domains/${domain}/inboxes/${inbox}`);
  assert.equal(list.status, 200, list.text);
  const out: Stored[] = [];
  for (const m of list.json.msgs as Array<{ id: string }>) {
    const msg = await h.call('GET', `/api/v2/domains/${domain}/inboxes/${inbox}/messages/${m.id}`);
    const raw = await h.call('GET', `/api/v2/domains/${domain}/inboxes/${inbox}/messages/${m.id}/raw`);
    const att = await h.call('GET', `/api/v2/domains/${domain}/inboxes/${inbox}/messages/${m.id}/attachments`);
    out.push({ id: m.id, json: msg.json, raw: raw.text, attachments: att.json.attachments });
  }
  return out;
}

/** The one message of an inbox. */
export async function onlyMessage(h: Harness, inbox: string, domain = DOMAIN): Promise<Stored> {
  const all = await readInbox(h, inbox, domain);
  assert.equal(all.length, 1, `inbox ${inbox}@${domain} holds ${all.length} messages`);
  return all[0];
}

/** A header of a stored message (the mail API lower-cases names). */
export function header(m: Stored, name: string): string | undefined {
  return m.json.headers[name.toLowerCase()];
}
