// One answer per message on every surface: the corpus of test/support/corpus.ts is
// sent over real SMTP to a real server on port 0, then every surface that answers on Node is
// asked for each message's code and link, and each must give the corpus's one answer. The
// extension's Copy commands answer in test/integration/oneAnswer.test.ts. The MCP tools answer
// through the MCP SDK's own client over /mcp.
//
// A new surface joins by adding one entry to SURFACES.
//
// Also here: `since: "now"` is the server's time: a client whose clock is
// 30 s behind or ahead of the server still gets exactly the fresh code.
import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import nodemailer from 'nodemailer';
import { createClient } from '../../src/api/client';
import { findCode, findLink, newestMessage } from '../../src/api/queries';
import type { InboxApi } from '../../src/api/types';
import { codeOf, contentOf, linkToClick } from '../../src/core/message';
import { buildViewContent } from '../../src/webview-ui/viewContent';
import { type InboxServer, startInboxServer } from '../../src/server/server';
import { loadOrCreateTokens } from '../../src/server/tokens';
import { waitForCode, waitForLink, TestInboxError } from '../../src/testing';
import { runTestCommand } from '../../src/cli/testCommands';
import { connect } from '../../src/testing/connection';
import { waitForCodeOn } from '../../src/testing/wait';
import { CORPUS, type CorpusMessage, rawOf } from '../support/corpus';
import { SESv2Client, SendEmailCommand } from '@aws-sdk/client-sesv2';
import { Client as SendGridClient } from '@sendgrid/client';
import { MailService } from '@sendgrid/mail';
import FormData from 'form-data';
import { ServerClient } from 'postmark';
import { Resend } from 'resend';
import { clearProductEnv } from '../support/cli';

const DOMAIN = 'inbox.test';

/** A corpus message as delivered: where it is and its id. */
interface Delivered {
  m: CorpusMessage;
  inbox: string;
  id: string;
}

/** What every surface is given. */
interface World {
  server: InboxServer;
  api: InboxApi;
  token: string;
  call(pathAndQuery: string): Promise<{ status: number; json: Record<string, unknown> }>;
}

/** A surface that answers: its code and its link for a delivered message (undefined: none). Either may be absent. */
interface Surface {
  name: string;
  code?(w: World, d: Delivered): Promise<string | undefined>;
  link?(w: World, d: Delivered): Promise<string | undefined>;
}

const orUndefinedOnTimeout = async <T>(p: Promise<T>): Promise<T | undefined> => {
  try {
    return await p;
  } catch (e) {
    if (TestInboxError.is(e, 'timeout')) return undefined;
    throw e;
  }
};

async function cli(w: World, args: string[]): Promise<string | undefined> {
  let stdout = '';
  let stderr = '';
  const io = { stdout: { write: (s: string) => (stdout += s) }, stderr: { write: (s: string) => (stderr += s) } };
  const code = await runTestCommand([...args, '--server', w.server.httpUrl, '--token', w.token, '--domain', DOMAIN, '--wait', '0s'], io);
  if (code === 1) return undefined;
  assert.equal(code, 0, stderr);
  return stdout.trim();
}

/** One MCP client (the SDK's own) per run, over the server's /mcp. */
let mcp: Client | undefined;
async function mcpTool(w: World, name: string, inbox: string): Promise<Record<string, unknown>> {
  if (!mcp) {
    mcp = new Client({ name: 'one-answer', version: '1.0.0' });
    await mcp.connect(new StreamableHTTPClientTransport(new URL(`${w.server.httpUrl}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${w.token}` } } }));
  }
  const r = (await mcp.callTool({ name, arguments: { inbox, domain: DOMAIN } })) as { structuredContent?: Record<string, unknown>; isError?: boolean };
  assert.ok(r.structuredContent && !r.isError, JSON.stringify(r));
  return r.structuredContent;
}
after(() => mcp?.close());

const SURFACES: Surface[] = [
  {
    name: 'HTTP code and link routes',
    code: async (w, d) => {
      const r = await w.call(`/api/v2/domains/${DOMAIN}/inboxes/${d.inbox}/code`);
      return r.status === 404 ? undefined : (r.json.code as string);
    },
    link: async (w, d) => {
      const r = await w.call(`/api/v2/domains/${DOMAIN}/inboxes/${d.inbox}/link?kind=any`);
      return r.status === 404 ? undefined : (r.json.url as string);
    },
  },
  {
    name: 'MCP tools (wait_for_code, get_verification_link, read_newest_message over /mcp)',
    code: async (w, d) => {
      const r = await mcpTool(w, 'wait_for_code', d.inbox);
      const read = await mcpTool(w, 'read_newest_message', d.inbox);
      assert.equal(read.code ?? undefined, r.found ? r.code : undefined, `${d.m.name}: read_newest_message's code is wait_for_code's`);
      return r.found ? (r.code as string) : undefined;
    },
    link: async (w, d) => {
      const r = await mcpTool(w, 'get_verification_link', d.inbox);
      const read = await mcpTool(w, 'read_newest_message', d.inbox);
      // The URL is the sender's: under the untrusted fields of both answers.
      const url = (x: Record<string, unknown>): string | undefined => (x.untrusted_mail_content as { link_url?: string } | undefined)?.link_url;
      assert.equal(url(read), r.found ? url(r) : undefined, `${d.m.name}: read_newest_message's link is get_verification_link's`);
      return r.found ? url(r) : undefined;
    },
  },
  {
    name: 'listing `code` (the tree)',
    code: async (w, d) => {
      const r = await w.call(`/api/v2/domains/${DOMAIN}/inboxes/${d.inbox}`);
      const msgs = r.json.msgs as Array<{ id: string; code?: string }>;
      return msgs.find((s) => s.id === d.id)?.code;
    },
  },
  {
    name: 'CLI (test-inbox code / link)',
    code: (w, d) => cli(w, ['code', d.inbox]),
    link: (w, d) => cli(w, ['link', d.inbox]),
  },
  {
    name: 'library (waitForCode / waitForLink)',
    code: async (w, d) => (await orUndefinedOnTimeout(waitForCode(`${d.inbox}@${DOMAIN}`, { server: w.server.httpUrl, token: w.token, timeout: 0 })))?.code,
    link: async (w, d) => (await orUndefinedOnTimeout(waitForLink(`${d.inbox}@${DOMAIN}`, { server: w.server.httpUrl, token: w.token, timeout: 0 })))?.url,
  },
  {
    name: 'core queries, Test Inbox server (LM and MCP tools)',
    code: async (w, d) => (await findCode({ api: w.api, domain: DOMAIN, inbox: d.inbox, testInbox: true }))?.value,
    link: async (w, d) => (await findLink({ api: w.api, domain: DOMAIN, inbox: d.inbox, testInbox: true }))?.value.url,
  },
  {
    name: 'core queries, hosted path (list, fetch, pick on the client)',
    code: async (w, d) => (await findCode({ api: w.api, domain: DOMAIN, inbox: d.inbox, testInbox: false }))?.value,
    link: async (w, d) => (await findLink({ api: w.api, domain: DOMAIN, inbox: d.inbox, testInbox: false }))?.value.url,
  },
  {
    name: 'read newest message (LM tool testInbox_readNewestMessage)',
    code: async (w, d) => (await newestMessage(w.api, DOMAIN, d.inbox))?.code,
    link: async (w, d) => (await newestMessage(w.api, DOMAIN, d.inbox))?.verificationLink?.url,
  },
  {
    name: 'fetched message (what Copy One-Time Code / Copy Verification Link compute)',
    code: async (w, d) => codeOf(contentOf(await w.api.getMessage(DOMAIN, d.inbox, d.id))),
    link: async (w, d) => linkToClick(contentOf(await w.api.getMessage(DOMAIN, d.inbox, d.id)))?.url,
  },
  {
    // The summary's code of `has:code`, and `code:<it>` must find that very message; has:link
    // must hold exactly for the messages with a link to click (the URL is then the link route's).
    name: 'search (GET /api/v2/search: has:code, code:, has:link)',
    code: async (w, d) => {
      const r = await w.call(`/api/v2/search?q=${encodeURIComponent(`inbox:${d.inbox} domain:${DOMAIN} has:code`)}`);
      const code = (r.json.msgs as Array<{ id: string; code?: string }>).find((m) => m.id === d.id)?.code;
      if (code !== undefined) {
        const byCode = await w.call(`/api/v2/search?q=${encodeURIComponent(`code:${code} inbox:${d.inbox}`)}`);
        assert.deepEqual((byCode.json.msgs as Array<{ id: string }>).map((m) => m.id), [d.id], `${d.m.name}: code:${code} finds it`);
      }
      return code;
    },
    link: async (w, d) => {
      const r = await w.call(`/api/v2/search?q=${encodeURIComponent(`inbox:${d.inbox} domain:${DOMAIN} has:link`)}`);
      if (!(r.json.msgs as Array<{ id: string }>).some((m) => m.id === d.id)) return undefined;
      const link = await w.call(`/api/v2/domains/${DOMAIN}/inboxes/${d.inbox}/link?kind=any`);
      return link.status === 404 ? 'has:link found a message the link route has no link for' : (link.json.url as string);
    },
  },
  {
    name: 'message view (code box and marked link)',
    code: async (w, d) => buildViewContent({ domain: DOMAIN, message: await w.api.getMessage(DOMAIN, d.inbox, d.id), allowRemoteImages: false }).code?.code,
    link: async (w, d) => buildViewContent({ domain: DOMAIN, message: await w.api.getMessage(DOMAIN, d.inbox, d.id), allowRemoteImages: false }).verification?.url,
  },
];

describe('one answer per message on every surface (corpus of test/support/corpus.ts)', function () {
  this.timeout(120_000);
  let dataDir: string;
  let w: World;
  const delivered: Delivered[] = [];
  let restoreEnv: (() => void) | undefined;

  before(async () => {
    restoreEnv = clearProductEnv();
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'test-inbox-oneanswer-'));
    const tokens = await loadOrCreateTokens(dataDir);
    const server = await startInboxServer({ host: '127.0.0.1', httpPort: 0, smtpPort: 0, dataDir, ...tokens, defaultDomain: DOMAIN });
    const api = createClient({ baseUrl: server.httpUrl, apiToken: tokens.apiToken });
    w = {
      server,
      api,
      token: tokens.apiToken,
      call: async (p) => {
        const res = await fetch(`${server.httpUrl}${p}`, { headers: { authorization: tokens.apiToken } });
        return { status: res.status, json: (await res.json()) as Record<string, unknown> };
      },
    };
    const t = nodemailer.createTransport({ host: server.smtpHost, port: server.smtpPort, secure: false, ignoreTLS: true });
    try {
      let phone = 15557000000;
      for (const m of CORPUS) {
        const inbox = m.sms ? String(++phone) : `oa-${m.name}`;
        const to = `${inbox}@${DOMAIN}`;
        await t.sendMail({ envelope: { from: 'sender@acme.test', to: [to] }, raw: await rawOf(m, to) });
        const { msgs } = await api.listInbox(DOMAIN, inbox, { limit: 1 });
        assert.equal(msgs.length, 1, `${m.name} arrived`);
        delivered.push({ m, inbox, id: msgs[0].id });
      }
    } finally {
      t.close();
    }
  });

  after(async () => {
    await w?.api.dispose();
    await w?.server.close();
    await fs.rm(dataDir, { recursive: true, force: true });
    restoreEnv?.();
  });

  it('the corpus: at least 30 messages, SMS and email, several languages, codes and links, and some with neither', () => {
    assert.ok(CORPUS.length >= 30);
    assert.ok(CORPUS.some((m) => m.sms) && CORPUS.some((m) => !m.sms));
    assert.ok(CORPUS.filter((m) => m.expect.code).length >= 15);
    assert.ok(CORPUS.filter((m) => m.expect.link).length >= 15);
    assert.ok(CORPUS.some((m) => !m.expect.code && !m.expect.link));
    assert.equal(new Set(CORPUS.map((m) => m.name)).size, CORPUS.length);
  });

  for (const s of SURFACES) {
    it(`${s.name}: the corpus's code and link for every message`, async () => {
      const wrong: string[] = [];
      for (const d of delivered) {
        if (s.code) {
          const got = await s.code(w, d);
          if (got !== d.m.expect.code) wrong.push(`${d.m.name}: code ${JSON.stringify(got)}, expected ${JSON.stringify(d.m.expect.code)}`);
        }
        if (s.link) {
          const got = await s.link(w, d);
          if (got !== d.m.expect.link) wrong.push(`${d.m.name}: link ${JSON.stringify(got)}, expected ${JSON.stringify(d.m.expect.link)}`);
        }
      }
      assert.deepEqual(wrong, []);
    });
  }

  // The corpus's email messages sent through each provider API by its official SDK get
  // the same one answer from every surface.
  describe('messages sent through the provider APIs (official SDKs)', () => {
    type Sender = (m: CorpusMessage, to: string) => Promise<void>;
    const byProvider = new Map<string, Delivered[]>();
    const providers: Array<[string, (base: string, key: string) => Promise<Sender>]> = [
      ['Resend', async (base, key) => {
        const resend = new Resend(key, { baseUrl: base });
        return async (m, to) => {
          const { error } = await resend.emails.send({ from: m.from, to, subject: m.subject, ...(m.text !== undefined ? { text: m.text } : {}), ...(m.html !== undefined ? { html: m.html } : {}), ...(m.headers ? { headers: m.headers } : {}) } as Parameters<typeof resend.emails.send>[0]);
          assert.equal(error, null, JSON.stringify(error));
        };
      }],
      ['SendGrid', async (base, key) => {
        const client = new SendGridClient();
        client.setApiKey(key);
        client.setDefaultRequest('baseUrl', base);
        const sg = new MailService();
        sg.setClient(client);
        return async (m, to) => {
          await sg.send({ to, from: m.from, subject: m.subject, ...(m.text !== undefined ? { text: m.text } : {}), ...(m.html !== undefined ? { html: m.html } : {}), ...(m.headers ? { headers: m.headers } : {}) } as Parameters<typeof sg.send>[0]);
        };
      }],
      ['Postmark', async (base, key) => {
        const pm = new ServerClient(key, { useHttps: false, requestHost: new URL(base).host });
        return async (m, to) => {
          await pm.sendEmail({ From: m.from, To: to, Subject: m.subject, TextBody: m.text, HtmlBody: m.html, Headers: Object.entries(m.headers ?? {}).map(([Name, Value]) => ({ Name, Value })) });
        };
      }],
      ['Mailgun', async (base, key) => {
        const Mailgun = (await import('mailgun.js')).default;
        const mg = new Mailgun(FormData).client({ username: 'api', key, url: base });
        return async (m, to) => {
          const headers = Object.fromEntries(Object.entries(m.headers ?? {}).map(([k, v]) => [`h:${k}`, v]));
          await mg.messages.create('mg.acme.test', { from: m.from, to, subject: m.subject, ...(m.text !== undefined ? { text: m.text } : {}), ...(m.html !== undefined ? { html: m.html } : {}), ...headers } as never);
        };
      }],
      ['Amazon SES v2', async (base, key) => {
        const ses = new SESv2Client({ region: 'us-east-1', endpoint: base, credentials: { accessKeyId: 'test-inbox', secretAccessKey: key }, maxAttempts: 1 });
        return async (m, to) => {
          const body = { ...(m.text !== undefined ? { Text: { Data: m.text } } : {}), ...(m.html !== undefined ? { Html: { Data: m.html } } : {}) };
          const headers = Object.entries(m.headers ?? {}).map(([Name, Value]) => ({ Name, Value }));
          await ses.send(new SendEmailCommand({ FromEmailAddress: m.from, Destination: { ToAddresses: [to] }, Content: { Simple: { Subject: { Data: m.subject }, Body: body, ...(headers.length ? { Headers: headers } : {}) } } }));
        };
      }],
    ];

    before(async () => {
      const { providerKey } = await loadOrCreateTokens(dataDir);
      for (const [name, make] of providers) {
        const send = await make(w.server.httpUrl, providerKey);
        const list: Delivered[] = [];
        const tag = name.toLowerCase().replace(/[^a-z]+/g, '');
        for (const m of CORPUS.filter((x) => !x.sms)) {
          const inbox = `pv-${tag}-${m.name}`;
          await send(m, `${inbox}@${DOMAIN}`);
          const { msgs } = await w.api.listInbox(DOMAIN, inbox, { limit: 1 });
          assert.equal(msgs.length, 1, `${m.name} arrived through ${name}`);
          list.push({ m, inbox, id: msgs[0].id });
        }
        byProvider.set(name, list);
      }
    });

    for (const [name] of providers) {
      it(`${name}: every surface answers the corpus's code and link for every email message`, async () => {
        const wrong: string[] = [];
        const list = byProvider.get(name)!;
        assert.ok(list.length >= 25);
        for (const s of SURFACES) {
          for (const d of list) {
            if (s.code) {
              const got = await s.code(w, d);
              if (got !== d.m.expect.code) wrong.push(`${s.name} / ${d.m.name}: code ${JSON.stringify(got)}, expected ${JSON.stringify(d.m.expect.code)}`);
            }
            if (s.link) {
              const got = await s.link(w, d);
              if (got !== d.m.expect.link) wrong.push(`${s.name} / ${d.m.name}: link ${JSON.stringify(got)}, expected ${JSON.stringify(d.m.expect.link)}`);
            }
          }
        }
        assert.deepEqual(wrong, []);
      });
    }
  });

  describe('since "now" is the server\'s time (a skewed client clock changes nothing)', () => {
    async function smtp(inbox: string, text: string): Promise<void> {
      const t = nodemailer.createTransport({ host: w.server.smtpHost, port: w.server.smtpPort, secure: false, ignoreTLS: true });
      try {
        await t.sendMail({ from: 'Acme <no-reply@acme.test>', to: `${inbox}@${DOMAIN}`, subject: 'Your code', text });
      } finally {
        t.close();
      }
    }

    for (const skewMs of [-30_000, 30_000]) {
      const label = skewMs < 0 ? 'behind' : 'ahead';
      it(`a client 30 s ${label} gets exactly the fresh code (core queries, both paths, and the library)`, async () => {
        const clock = (): number => Date.now() + skewMs;
        for (const testInbox of [true, false]) {
          const inbox = `skew-${label}-${testInbox ? 'routes' : 'list'}`;
          await smtp(inbox, 'Your verification code is 111111.');
          const waiting = findCode({ api: w.api, domain: DOMAIN, inbox, testInbox, since: 'now', waitMs: 20_000, pollMs: 100, clock });
          await new Promise((r) => setTimeout(r, 500));
          await smtp(inbox, 'Your verification code is 222222.');
          assert.equal((await waiting)?.value, '222222', `${inbox}: the fresh code, not the old one`);
        }
        const inbox = `skew-${label}-lib`;
        await smtp(inbox, 'Your verification code is 333333.');
        const conn = await connect({ server: w.server.httpUrl, token: w.token, domain: DOMAIN });
        try {
          const waiting = waitForCodeOn(conn, inbox, { since: 'now', timeout: '20s', clock });
          await new Promise((r) => setTimeout(r, 500));
          await smtp(inbox, 'Your verification code is 444444.');
          assert.equal((await waiting).code, '444444');
        } finally {
          await conn.close();
        }
      });
    }

    it('"now" is read from the server, never from the client clock: a wait with no fresh mail ends empty, however far the client clock is off', async () => {
      const inbox = 'skew-empty';
      await smtp(inbox, 'Your verification code is 555555.');
      for (const skewMs of [-30_000, 30_000]) {
        for (const testInbox of [true, false]) {
          const found = await findCode({ api: w.api, domain: DOMAIN, inbox, testInbox, since: 'now', waitMs: 0, clock: () => Date.now() + skewMs });
          assert.equal(found, undefined, `skew ${skewMs}, testInbox ${testInbox}`);
        }
      }
    });
  });
});
