// Which hosted URLs wait for the user's confirmation, and a connection that sends nothing to
// one until it is confirmed: a real HTTP server on a free port records what reaches it.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import * as path from 'node:path';
import type { AddressInfo } from 'node:net';
import { createClient } from '../../src/api/client';
import { TokenStore } from '../../src/extension/config/secrets';
import { ConfirmedServers, trustReasons } from '../../src/extension/config/serverTrust';
import { readSettings, type Settings } from '../../src/extension/config/settings';
import { Connection } from '../../src/extension/connection/connection';
import { ExtensionError } from '../../src/extension/errors';
import { memoryLog, memoryMemento as memento, memorySecrets } from '../support/memory';

describe('extension manifest: workspace trust', () => {
  it('supports untrusted workspaces in a limited way, restricting the settings a workspace could abuse, and no virtual workspaces', () => {
    const pkg = JSON.parse(readFileSync(path.resolve(__dirname, '../../package.json'), 'utf8')) as {
      capabilities?: { untrustedWorkspaces?: { supported?: unknown; restrictedConfigurations?: string[] }; virtualWorkspaces?: { supported?: unknown } };
    };
    assert.equal(pkg.capabilities?.untrustedWorkspaces?.supported, 'limited');
    assert.deepEqual([...(pkg.capabilities?.untrustedWorkspaces?.restrictedConfigurations ?? [])].sort(), ['testInbox.domains', 'testInbox.remoteImages', 'testInbox.server']);
    assert.equal(pkg.capabilities?.virtualWorkspaces?.supported, false);
  });
});

describe('extension server trust', () => {
  it('asks for a URL the workspace chose and for plain http to another machine, not for the user\'s own https or loopback', () => {
    assert.deepEqual(trustReasons({ kind: 'local' }), []);
    assert.deepEqual(trustReasons({ kind: 'remote', baseUrl: 'https://api.mailinator.com' }), []);
    assert.deepEqual(trustReasons({ kind: 'remote', baseUrl: 'http://127.0.0.1:2580' }), []);
    assert.deepEqual(trustReasons({ kind: 'remote', baseUrl: 'http://localhost:2580' }), []);
    assert.deepEqual(trustReasons({ kind: 'remote', baseUrl: 'http://[::1]:2580' }), []);
    assert.deepEqual(trustReasons({ kind: 'remote', baseUrl: 'http://inbox.example.com' }), ['plainHttp']);
    assert.deepEqual(trustReasons({ kind: 'remote', baseUrl: 'http://127.0.0.1.evil.test' }), ['plainHttp']);
    assert.deepEqual(trustReasons({ kind: 'remote', baseUrl: 'https://inbox.example.com', fromWorkspace: true }), ['workspace']);
    assert.deepEqual(trustReasons({ kind: 'remote', baseUrl: 'http://10.0.0.5:80', fromWorkspace: true }), ['workspace', 'plainHttp']);
  });

  it('remembers a confirmation per URL and reason', async () => {
    const c = new ConfirmedServers(memento());
    assert.deepEqual(c.missing('https://a.test', ['workspace']), ['workspace']);
    await c.confirm('https://a.test', ['workspace']);
    assert.deepEqual(c.missing('https://a.test', ['workspace', 'plainHttp']), ['plainHttp']);
    assert.deepEqual(c.missing('https://b.test', ['workspace']), ['workspace']);
  });

  it('sends nothing to a workspace-chosen URL until the user confirms it, then uses it', async () => {
    const auth: Array<string | undefined> = [];
    const srv = http.createServer((req, res) => {
      auth.push(req.headers.authorization);
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"domains":[]}');
    });
    await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
    const baseUrl = `http://127.0.0.1:${(srv.address() as AddressInfo).port}`;
    const base: Settings = readSettings({ get: <T>(k: string) => (k === 'server' ? baseUrl : undefined) as T | undefined }).settings;
    const settings: Settings = { ...base, server: { kind: 'remote', baseUrl, fromWorkspace: true } };
    const tokens = new TokenStore(memorySecrets());
    await tokens.set('api', baseUrl, 'stored-token-123456');
    const conn = new Connection({ settings: () => settings, tokens, trust: new ConfirmedServers(memento()), log: memoryLog().log, createApi: (o) => createClient(o), cliPath: 'unused', defaultDataDir: 'unused' });
    try {
      await assert.rejects(conn.ensure(), (e: unknown) => ExtensionError.is(e, 'unconfirmed_server') && /workspace settings chose/.test(e.message));
      assert.deepEqual(auth, [], 'no request, so no token');
      const pending = conn.unconfirmed();
      assert.deepEqual(pending, { baseUrl, reasons: ['workspace'] });
      await conn.confirmServer(pending.baseUrl, pending.reasons);
      await (await conn.ensure()).listDomains();
      // Once confirmed: whether anything answers (a bare GET), what it is (/healthz with a
      // challenge), both without a token; then the token.
      assert.deepEqual(auth, [undefined, undefined, 'stored-token-123456']);
    } finally {
      await conn.dispose();
      await new Promise<void>((r) => srv.close(() => r()));
    }
  });
});
