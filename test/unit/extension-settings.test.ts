import assert from 'node:assert/strict';
import { DEFAULT_POLL_SECONDS, defaultDomains, normalizeBaseUrl, readSettings } from '../../src/extension/config/settings';
import { DEFAULT_DOMAIN, DEFAULT_HTTP_PORT, DEFAULT_SMTP_PORT } from '../../src/shared/contract';

const reader = (values: Record<string, unknown>) => ({ get: <T>(k: string) => values[k] as T | undefined });

describe('extension settings', () => {
  it('uses the documented defaults when nothing is set', () => {
    const { settings, problems } = readSettings(reader({}));
    assert.deepEqual(problems, []);
    assert.deepEqual(settings.server, { kind: 'local' });
    assert.equal(settings.httpPort, DEFAULT_HTTP_PORT);
    assert.equal(settings.smtpPort, DEFAULT_SMTP_PORT);
    assert.equal(settings.localDomain, DEFAULT_DOMAIN);
    assert.equal(settings.pollSeconds, DEFAULT_POLL_SECONDS);
    assert.equal(settings.remoteImages, false);
    assert.deepEqual(settings.domains, []);
    assert.equal(settings.smtpTls, false, 'SMTP TLS is off unless asked for');
    assert.equal(settings.durability, 'process');
  });

  it('reads local.durability, and reports a value that is neither process nor strict', () => {
    assert.equal(readSettings(reader({ 'local.durability': 'strict' })).settings.durability, 'strict');
    const { settings, problems } = readSettings(reader({ 'local.durability': 'fsync' }));
    assert.equal(settings.durability, 'process');
    assert.deepEqual(problems.map((p) => p.key), ['testInbox.local.durability']);
  });

  it('turns SMTP STARTTLS on only for a true local.smtpTls, and the manifest agrees on the default', async () => {
    assert.equal(readSettings(reader({ 'local.smtpTls': true })).settings.smtpTls, true);
    assert.equal(readSettings(reader({ 'local.smtpTls': 'yes' })).settings.smtpTls, false);
    const { readFile } = await import('node:fs/promises');
    const pkg = JSON.parse(await readFile(require.resolve('../../package.json'), 'utf8')) as { contributes: { configuration: { properties: Record<string, { default?: unknown; type?: string }> } } };
    assert.deepEqual(pkg.contributes.configuration.properties['testInbox.local.smtpTls'], { ...pkg.contributes.configuration.properties['testInbox.local.smtpTls'], type: 'boolean', default: false });
  });

  it('turns the drop-in APIs on only for a true local.compat, and the manifest agrees on the default', async () => {
    assert.equal(readSettings(reader({})).settings.compat, false);
    assert.equal(readSettings(reader({ 'local.compat': true })).settings.compat, true);
    assert.equal(readSettings(reader({ 'local.compat': 'yes' })).settings.compat, false);
    const { readFile } = await import('node:fs/promises');
    const pkg = JSON.parse(await readFile(require.resolve('../../package.json'), 'utf8')) as { contributes: { configuration: { properties: Record<string, { default?: unknown; type?: string }> } } };
    assert.deepEqual(pkg.contributes.configuration.properties['testInbox.local.compat'], { ...pkg.contributes.configuration.properties['testInbox.local.compat'], type: 'boolean', default: false });
  });

  it('reads a hosted server URL and normalises it', () => {
    const { settings, problems } = readSettings(reader({ server: 'HTTPS://API.Mailinator.com/' }));
    assert.deepEqual(problems, []);
    assert.deepEqual(settings.server, { kind: 'remote', baseUrl: 'https://api.mailinator.com' });
  });

  it('falls back to local and reports a server value that is not a URL', () => {
    const { settings, problems } = readSettings(reader({ server: 'ftp://example.com' }));
    assert.deepEqual(settings.server, { kind: 'local' });
    assert.equal(problems.length, 1);
    assert.equal(problems[0].key, 'testInbox.server');
    assert.match(problems[0].message, /neither "local" nor an http\(s\) URL/);
  });

  it('rejects out-of-range ports and keeps the default', () => {
    const { settings, problems } = readSettings(reader({ 'local.httpPort': 70000, 'local.smtpPort': 2.5 }));
    assert.equal(settings.httpPort, DEFAULT_HTTP_PORT);
    assert.equal(settings.smtpPort, DEFAULT_SMTP_PORT);
    assert.deepEqual(
      problems.map((p) => p.key),
      ['testInbox.local.httpPort', 'testInbox.local.smtpPort'],
    );
  });

  it('accepts port 0 meaning any free port', () => {
    const { settings } = readSettings(reader({ 'local.httpPort': 0, 'local.smtpPort': 0 }));
    assert.equal(settings.httpPort, 0);
    assert.equal(settings.smtpPort, 0);
  });

  it('keeps valid domains lower-cased and unique, reporting the others', () => {
    const { settings, problems } = readSettings(reader({ domains: ['Acme.Test', 'acme.test', 'not a domain', 42, 'private'] }));
    assert.deepEqual(settings.domains, ['acme.test', 'private']);
    assert.equal(problems.length, 2);
  });

  it('clamps the poll interval to its documented minimum by reporting smaller values', () => {
    const { settings, problems } = readSettings(reader({ pollIntervalSeconds: 1 }));
    assert.equal(settings.pollSeconds, DEFAULT_POLL_SECONDS);
    assert.equal(problems[0].key, 'testInbox.pollIntervalSeconds');
  });

  it("shows a Test Inbox server's default domain first, then its other domains", () => {
    const { settings } = readSettings(reader({}));
    assert.deepEqual(defaultDomains(settings, { defaultDomain: 'inbox.test', listed: ['other.test', 'inbox.test'] }), ['inbox.test', 'other.test']);
    const remote = readSettings(reader({ server: 'https://inbox.team.example' })).settings;
    assert.deepEqual(defaultDomains(remote, { defaultDomain: 'team.test', listed: ['ci.test'] }), ['team.test', 'ci.test'], 'a remote Test Inbox server lists its own domains, not private');
  });

  it('shows the private domain of a hosted server when no domains are set', () => {
    const { settings } = readSettings(reader({ server: 'https://api.mailinator.com' }));
    assert.deepEqual(defaultDomains(settings, undefined), ['private']);
  });

  it('prefers the domains the user listed', () => {
    const { settings } = readSettings(reader({ domains: ['a.test'] }));
    assert.deepEqual(defaultDomains(settings, { defaultDomain: 'b.test', listed: ['c.test'] }), ['a.test']);
  });

  it('refuses base URLs with credentials in them', () => {
    assert.equal(normalizeBaseUrl('https://user:pw@example.com'), undefined);
    const { settings, problems } = readSettings({ get: <T>(k: string) => (k === 'server' ? 'https://alice:secret@inbox.example.com/api' : undefined) as T | undefined });
    assert.deepEqual(settings.server, { kind: 'local' }, 'refused: the default is used');
    assert.equal(problems.length, 1);
    assert.match(problems[0].message, /user name or password/);
    assert.ok(problems[0].message.includes('https://***@inbox.example.com/api'), problems[0].message);
    assert.ok(!/alice|secret/.test(problems[0].message), 'the credentials are not quoted');
    assert.equal(normalizeBaseUrl('http://127.0.0.1:2580/api/'), 'http://127.0.0.1:2580/api');
  });
});
