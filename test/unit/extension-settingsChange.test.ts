// What a change of the testInbox.* settings sets off (config/changePolicy.ts), with settings
// read by the real readSettings, and the domains the tree shows (config/settings.ts).
import assert from 'node:assert/strict';
import { settingsChangeEffects } from '../../src/extension/config/changePolicy';
import { readSettings, serverKey, shownDomains, type Settings } from '../../src/extension/config/settings';

const read = (values: Record<string, unknown> = {}): Settings => readSettings({ get: <T>(k: string) => values[k] as T | undefined }).settings;

/** affectsConfiguration for a change of these keys (relative to `testInbox`): a key is affected by itself and by its group. */
const changed =
  (...keys: string[]) =>
  (key: string): boolean =>
    keys.some((k) => k === key || k.startsWith(`${key}.`));

describe('extension settings change policy', () => {
  it('switching to a hosted server reconnects, resets read marks and reloads the tree', () => {
    const fx = settingsChangeEffects(read(), read({ server: 'https://api.mailinator.com' }), changed('server'));
    assert.deepEqual(fx, { reconnect: true, resetReadState: true, restartPollTimer: false, reloadTree: false });
  });

  it('a server setting written differently but naming the same server changes nothing', () => {
    const fx = settingsChangeEffects(read({ server: 'https://api.mailinator.com' }), read({ server: 'HTTPS://API.mailinator.com/' }), changed('server'));
    assert.deepEqual(fx, { reconnect: false, resetReadState: false, restartPollTimer: false, reloadTree: false });
  });

  it('a local server or retention setting restarts the local server but keeps read marks', () => {
    for (const key of ['local.httpPort', 'local.smtpPort', 'local.domain', 'local.dataFolder', 'retention.maxMessages', 'retention.maxAgeDays']) {
      const fx = settingsChangeEffects(read(), read(), changed(key));
      assert.deepEqual(fx, { reconnect: true, resetReadState: false, restartPollTimer: false, reloadTree: false }, key);
    }
  });

  it('the polling interval restarts the poll timer only', () => {
    const fx = settingsChangeEffects(read(), read({ pollIntervalSeconds: 30 }), changed('pollIntervalSeconds'));
    assert.deepEqual(fx, { reconnect: false, resetReadState: false, restartPollTimer: true, reloadTree: false });
  });

  it('the listed domains reload the tree without reconnecting, unless a reconnect reloads it anyway', () => {
    assert.deepEqual(settingsChangeEffects(read(), read({ domains: ['a.test'] }), changed('domains')), {
      reconnect: false,
      resetReadState: false,
      restartPollTimer: false,
      reloadTree: true,
    });
    assert.equal(settingsChangeEffects(read(), read({ domains: ['a.test'] }), changed('domains', 'local.httpPort')).reloadTree, false);
  });

  it('settings that only the views read set nothing off', () => {
    for (const key of ['remoteImages', 'notifyNewMail']) {
      assert.deepEqual(settingsChangeEffects(read(), read(), changed(key)), { reconnect: false, resetReadState: false, restartPollTimer: false, reloadTree: false }, key);
    }
  });
});

describe('extension shown domains', () => {
  const noServer = { defaultDomain: 'inbox.test', list: async (): Promise<string[]> => assert.fail('the server is not asked') };

  it('shows the listed domains only, without asking the server', async () => {
    assert.deepEqual(await shownDomains(read({ domains: ['b.test', 'a.test'] }), noServer, () => [{ domain: 'c.test', inbox: 'x' }]), ['b.test', 'a.test']);
  });

  it('locally: the local domain, the server’s domains, then the domains of added inboxes', async () => {
    const shown = await shownDomains(read(), { defaultDomain: 'inbox.test', list: async () => ['inbox.test', 'other.test'] }, () => [{ domain: 'added.test', inbox: 'x' }, { domain: 'other.test', inbox: 'y' }]);
    assert.deepEqual(shown, ['inbox.test', 'other.test', 'added.test']);
  });

  it('hosted: private plus the domains of added inboxes, without asking the server', async () => {
    assert.deepEqual(await shownDomains(read({ server: 'https://api.mailinator.com' }), undefined, () => [{ domain: 'team.test', inbox: 'x' }]), ['private', 'team.test']);
  });

  it('a remote Test Inbox server: its default domain and its list, not private', async () => {
    const shown = await shownDomains(read({ server: 'https://inbox.team.example' }), { defaultDomain: 'team.test', list: async () => ['ci.test'] }, () => []);
    assert.deepEqual(shown, ['team.test', 'ci.test']);
  });

  it('keys per-server state by the hosted URL, or `local`', () => {
    assert.equal(serverKey(read()), 'local');
    assert.equal(serverKey(read({ server: 'https://api.mailinator.com/' })), 'https://api.mailinator.com');
  });
});
