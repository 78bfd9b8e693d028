// Discovery across the data folder's two defaults (src/shared/contract.ts discoveryDataDirs,
// src/testing/connection.ts): on macOS and Windows the default moved from
// ~/.local/share/test-inbox to the platform's folder, and the library still finds a server of
// an earlier version running on the old one, with its tokens.json. Real servers on port 0,
// real folders under a home whose name has a space and non-ASCII letters; darwin's paths run
// on this machine's file system.
import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { SERVER_FILE } from '../../src/shared/contract';
import { type InboxServer, startInboxServer } from '../../src/server/server';
import { loadOrCreateTokens } from '../../src/server/tokens';
import { connect } from '../../src/testing/connection';

/** A fallback URL that must not be asked: records every request. */
async function fallback(): Promise<{ url: string; asked: number; close(): Promise<void> }> {
  const f = { url: '', asked: 0, close: (): Promise<void> => new Promise<void>((resolve) => srv.close(() => resolve())) };
  const srv = http.createServer((_req, res) => {
    f.asked++;
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  f.url = `http://127.0.0.1:${(srv.address() as AddressInfo).port}`;
  return f;
}

describe('discovery of the local server across the old and new default folders', function () {
  this.timeout(30_000);
  let home: string;
  let modern: string;
  let legacy: string;
  // macOS's rule on POSIX; Windows' own under Windows' Node (npm run test:windows), whose paths those are.
  const platform: NodeJS.Platform = process.platform === 'win32' ? 'win32' : 'darwin';
  const darwin = (): { platform: NodeJS.Platform; home: string } => ({ platform, home });

  async function serveOn(dataDir: string): Promise<InboxServer> {
    const tokens = await loadOrCreateTokens(dataDir);
    return startInboxServer({ host: '127.0.0.1', httpPort: 0, smtpPort: 0, dataDir, ...tokens, defaultDomain: 'inbox.test' });
  }

  beforeEach(async () => {
    home = await fs.mkdtemp(path.join(os.tmpdir(), 'test-inbox-home José Núñez-'));
    modern = platform === 'win32' ? path.join(home, 'AppData', 'Local', 'test-inbox') : path.join(home, 'Library', 'Application Support', 'test-inbox');
    legacy = path.join(home, '.local', 'share', 'test-inbox');
  });

  afterEach(async () => {
    await fs.rm(home, { recursive: true, force: true });
  });

  it('finds a server of an earlier version on ~/.local/share/test-inbox though the new default holds data', async () => {
    await fs.mkdir(modern, { recursive: true });
    await fs.writeFile(path.join(modern, 'some-data'), 'x');
    const server = await serveOn(legacy);
    const unused = await fallback();
    try {
      const conn = await connect({}, {}, unused.url, darwin());
      try {
        assert.equal(conn.dataDir, legacy);
        assert.equal(conn.baseUrl, server.httpUrl);
        assert.ok(conn.savedTokens.apiToken, "the legacy folder's tokens.json is used once the server proved itself");
        assert.equal(await conn.isTestInbox(), true);
      } finally {
        await conn.close();
      }
      assert.equal(unused.asked, 0, 'the fallback URL was not asked');
    } finally {
      await server.close();
      await unused.close();
    }
  });

  it("prefers the new default's server.json when both folders hold one", async () => {
    const old = await serveOn(legacy);
    const current = await serveOn(modern);
    try {
      const conn = await connect({}, {}, 'http://127.0.0.1:1', darwin());
      try {
        assert.equal(conn.dataDir, modern);
        assert.equal(conn.baseUrl, current.httpUrl);
      } finally {
        await conn.close();
      }
    } finally {
      await current.close();
      await old.close();
    }
  });

  it('a folder given (option, TEST_INBOX_DATA_DIR) is the only one looked in', async () => {
    const server = await serveOn(legacy);
    const unused = await fallback();
    try {
      await assert.rejects(connect({ token: 'x'.repeat(24) }, { TEST_INBOX_DATA_DIR: modern }, unused.url, darwin()));
      assert.equal((await fs.stat(path.join(legacy, SERVER_FILE))).isFile(), true);
      assert.ok(unused.asked > 0, 'with no server.json in the given folder, the fallback URL is asked');
    } finally {
      await server.close();
      await unused.close();
    }
  });
});
