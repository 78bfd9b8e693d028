// The drop-in APIs' tests (compat-*.test.ts): the real server started on port 0 with
// `--compat` (as `serve --compat` starts it), mail sent to it over real SMTP with nodemailer,
// and, with TEST_INBOX_TEST_STORE=postgres, the PostgreSQL store of a throwaway cluster.
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import nodemailer from 'nodemailer';
import type Mail from 'nodemailer/lib/mailer';
import { type InboxServer, startInboxServer } from '../../src/server/server';
import { loadOrCreateTokens } from '../../src/server/tokens';
import { STORE_KIND } from './api-harness';
import { sharedCluster } from '../support/postgres';

export interface CompatServer {
  server: InboxServer;
  apiToken: string;
  /** `http://127.0.0.1:<port>` */
  base: string;
  send(mail: Mail.Options): Promise<void>;
  close(): Promise<void>;
}

export async function startCompat(o: { host?: string; compat?: boolean; open?: boolean } = {}): Promise<CompatServer> {
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'test-inbox-compat-'));
  const tokens = await loadOrCreateTokens(dataDir);
  const databaseUrl = STORE_KIND === 'postgres' ? await (await sharedCluster()).createDatabase() : undefined;
  const server = await startInboxServer({
    host: o.host ?? '127.0.0.1',
    httpPort: 0,
    smtpPort: 0,
    dataDir,
    ...tokens,
    ...(databaseUrl !== undefined ? { databaseUrl } : {}),
    defaultDomain: 'inbox.test',
    ...(o.compat === false ? {} : { compat: { open: o.open ?? false } }),
  });
  const transport = nodemailer.createTransport({ host: '127.0.0.1', port: server.smtpPort, secure: false });
  return {
    server,
    apiToken: tokens.apiToken,
    base: `http://127.0.0.1:${server.httpPort}`,
    send: async (mail) => {
      await transport.sendMail({ from: 'Sender Person <sender@example.com>', ...mail });
    },
    close: async () => {
      transport.close();
      await server.close();
      await fs.rm(dataDir, { recursive: true, force: true });
    },
  };
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
