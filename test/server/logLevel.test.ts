// `--log-level` (issue 35, polish): `debug` writes one line per stored message (its id, route,
// sender and inbox; never its body or a token), and the default writes nothing per message and
// does no work for it: the per-message line is a store listener that exists only at debug.
// Real servers on port 0 (in-process, and the CLI as a child for the flag's environment twin),
// real SMTP through nodemailer, a real HTTP inject.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import nodemailer from 'nodemailer';
import { parseServeArgs } from '../../src/cli/cli';
import { type InboxServer, startInboxServer } from '../../src/server/server';
import { MaildirStore } from '../../src/server/store/maildir/store';
import { API_TOKEN_ENV, DEFAULT_LOG_LEVEL, LOG_LEVEL_ENV, type LogLevel, WEBHOOK_TOKEN_ENV } from '../../src/shared/contract';
import { startCli } from './cliProcess';
import { cliArgv } from '../support/cli';

const API = 'api-token-loglevel-7c1e9a2b4d';
const WEBHOOK = 'wh-token-loglevel-3f8d0e6a1c';
const BODY = 'BODY-MARKER-8b2f: this text must never reach a log line';

describe('--log-level (real server, real SMTP)', function () {
  this.timeout(60_000);
  let root: string;
  const servers: InboxServer[] = [];

  beforeEach(async () => {
    root = await fs.mkdtemp(path.join(os.tmpdir(), 'test-inbox-loglevel-'));
  });

  afterEach(async () => {
    for (const s of servers.splice(0)) await s.close();
    await fs.rm(root, { recursive: true, force: true });
  });

  /** A server logging into `lines`; counts the store 'message' listeners it makes while it starts. */
  async function start(logLevel: LogLevel | undefined, lines: Array<{ level: string; msg: string }>): Promise<{ server: InboxServer; messageListeners: number }> {
    let messageListeners = 0;
    const on = MaildirStore.prototype.on;
    MaildirStore.prototype.on = function (this: MaildirStore, event, listener) {
      if (event === 'message') messageListeners++;
      return on.call(this, event, listener);
    } as typeof on;
    try {
      const server = await startInboxServer({
        host: '127.0.0.1',
        httpPort: 0,
        smtpPort: 0,
        dataDir: path.join(root, logLevel ?? 'default'),
        apiToken: API,
        webhookToken: WEBHOOK,
        defaultDomain: 'inbox.test',
        log: (level, msg) => lines.push({ level, msg }),
        ...(logLevel ? { logLevel } : {}),
      });
      servers.push(server);
      return { server, messageListeners };
    } finally {
      MaildirStore.prototype.on = on;
    }
  }

  /** One message by SMTP and one by the HTTP API, each with the body marker and a token in its text; resolves their ids once the store has announced both. */
  async function sendBoth(server: InboxServer): Promise<string[]> {
    const announced = new Set<string>();
    server.store.on('message', (meta) => announced.add(meta.id));
    const ids = await sendTwo(server);
    for (let i = 0; i < 500 && !ids.every((id) => announced.has(id)); i++) await new Promise((res) => setTimeout(res, 10));
    assert.ok(ids.every((id) => announced.has(id)), 'both messages were announced');
    return ids;
  }

  async function sendTwo(server: InboxServer): Promise<string[]> {
    const transport = nodemailer.createTransport({ host: server.smtpHost, port: server.smtpPort, secure: false, ignoreTLS: true });
    const info = await transport.sendMail({ from: 'Alice <alice@example.com>', to: 'joe@inbox.test', subject: 'Hello', text: `${BODY} ${API}` });
    const smtpId = /stored as (\S+)/.exec(info.response)?.[1];
    assert.ok(smtpId, info.response);
    const r = await fetch(`${server.httpUrl}/api/v2/domains/inbox.test/inboxes/ann`, { method: 'POST', headers: { authorization: API, 'content-type': 'application/json' }, body: JSON.stringify({ from: 'ci@example.com', subject: 'Hi', text: `${BODY} ${WEBHOOK}` }) });
    assert.equal(r.status, 200);
    const { id } = (await r.json()) as { id: string };
    return [smtpId, id];
  }

  it('debug logs one line per message with its id, route and addresses, never its body or a token', async () => {
    const lines: Array<{ level: string; msg: string }> = [];
    const { server } = await start('debug', lines);
    const [smtpId, injectId] = await sendBoth(server);
    const debug = lines.filter((l) => l.level === 'debug');
    assert.equal(debug.length, 2, JSON.stringify(debug));
    assert.match(debug.find((l) => l.msg.includes(smtpId))?.msg ?? '', /stored: smtp from "Alice <alice@example\.com>" to joe@inbox\.test, \d+ bytes/);
    assert.match(debug.find((l) => l.msg.includes(injectId))?.msg ?? '', /stored: inject from "ci@example\.com" to ann@inbox\.test, \d+ bytes/);
    for (const l of lines) {
      assert.ok(!l.msg.includes('BODY-MARKER') && !l.msg.includes(API) && !l.msg.includes(WEBHOOK), `a log line holds the body or a token: ${l.msg}`);
      assert.ok(!l.msg.includes('Hello'), `a log line holds the subject: ${l.msg}`);
    }
  });

  it(`the default (${DEFAULT_LOG_LEVEL}) logs nothing per message and adds no per-message listener`, async () => {
    const atDefault: Array<{ level: string; msg: string }> = [];
    const plain = await start(undefined, atDefault);
    const atDebug: Array<{ level: string; msg: string }> = [];
    const debug = await start('debug', atDebug);
    // The per-message line is a listener of its own, made only at debug: at the default a message costs the log nothing.
    assert.equal(debug.messageListeners, plain.messageListeners + 1);
    const before = atDefault.length;
    await sendBoth(plain.server);
    await sendBoth(plain.server);
    assert.deepEqual(atDefault.slice(before), [], 'the default writes no line for a message');
    // warn drops info lines too.
    const atWarn: Array<{ level: string; msg: string }> = [];
    await start('warn', atWarn);
    assert.deepEqual(atWarn.filter((l) => l.level === 'info' || l.level === 'debug'), []);
    assert.ok(atDefault.some((l) => l.level === 'info'), 'the default keeps its info lines');
  });

  it(`parses --log-level and ${LOG_LEVEL_ENV} (the flag wins), refuses other values, and serve --help names both`, () => {
    const level = (argv: string[], env: NodeJS.ProcessEnv = {}): LogLevel => {
      const c = parseServeArgs(['serve', ...argv], env);
      assert.ok(c !== 'help' && c !== 'version');
      return c.logLevel;
    };
    assert.equal(level([]), 'info');
    assert.equal(level(['--log-level', 'debug']), 'debug');
    assert.equal(level(['--log-level', 'WARN']), 'warn');
    assert.equal(level([], { [LOG_LEVEL_ENV]: 'debug' }), 'debug');
    assert.equal(level(['--log-level', 'error'], { [LOG_LEVEL_ENV]: 'debug' }), 'error');
    assert.throws(() => level(['--log-level', 'verbose']), /--log-level must be one of error, warn, info, debug/);
    assert.throws(() => level([], { [LOG_LEVEL_ENV]: 'trace' }), /TEST_INBOX_LOG_LEVEL must be one of/);
    const help = spawnSync(process.execPath, [...cliArgv(), 'serve', '--help'], { encoding: 'utf8' });
    assert.match(help.stdout, /--log-level <level>/);
    assert.match(help.stdout, new RegExp(LOG_LEVEL_ENV));
  });

  it(`the CLI with ${LOG_LEVEL_ENV}=debug writes the line per message to stderr`, async () => {
    const r = startCli(['serve', '--http-port', '0', '--smtp-port', '0', '--data-dir', path.join(root, 'cli')], { [API_TOKEN_ENV]: API, [WEBHOOK_TOKEN_ENV]: WEBHOOK, [LOG_LEVEL_ENV]: 'debug' });
    try {
      const ready = await r.ready;
      const [host, port] = ready.smtp.split(':');
      const info = await nodemailer.createTransport({ host, port: Number(port), secure: false, ignoreTLS: true }).sendMail({ from: 'alice@example.com', to: 'joe@inbox.test', subject: 'x', text: BODY });
      const id = /stored as (\S+)/.exec(info.response)?.[1] ?? '';
      for (let i = 0; i < 100 && !r.stderr().includes(id); i++) await new Promise((res) => setTimeout(res, 20));
      assert.match(r.stderr(), new RegExp(` debug message ${id} stored: smtp from "alice@example\\.com" to joe@inbox\\.test`));
      assert.ok(!r.stderr().includes('BODY-MARKER'));
    } finally {
      await r.stop();
    }
  });
});
