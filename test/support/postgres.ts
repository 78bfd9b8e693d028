// A throwaway PostgreSQL cluster for the tests: `initdb` + `pg_ctl` on a temp dir and a free
// port, removed after. PostgreSQL refuses to run as root, so under root the cluster runs as
// `nobody`. The binaries come from PATH or Debian's /usr/lib/postgresql/<version>/bin.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync, chownSync } from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import pg from 'pg';
import { atExit } from './atExit';

/** The superuser of the throwaway cluster and its password (host logins need it: scram-sha-256). */
export const PG_USER = 'test_inbox';
export const PG_PASSWORD = 'pw-for-tests-only';

export interface Cluster {
  port: number;
  /** URL of a database of the cluster (`postgres` by default). */
  url(db?: string, password?: string): string;
  /** A fresh empty database; resolves its URL. */
  createDatabase(prefix?: string): Promise<string>;
  /** Stops the server (immediate mode: as a crash), keeping its data. */
  stop(): void;
  /** Starts it again on the same port. */
  start(): void;
  /** Stops it and removes every file. */
  destroy(): void;
}

function binDir(): string {
  const which = spawnSync('sh', ['-c', 'command -v initdb'], { encoding: 'utf8' });
  if (which.status === 0 && which.stdout.trim()) return path.dirname(which.stdout.trim());
  const root = '/usr/lib/postgresql';
  if (existsSync(root)) {
    const versions = readdirSync(root).filter((v) => /^\d+$/.test(v)).sort((a, b) => Number(b) - Number(a));
    for (const v of versions) if (existsSync(path.join(root, v, 'bin', 'initdb'))) return path.join(root, v, 'bin');
  }
  throw new Error('PostgreSQL is not installed: no initdb in PATH or /usr/lib/postgresql/*/bin (Debian: apt-get install postgresql)');
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

/** Under root: the uid/gid of `nobody`, whom initdb accepts. */
function runAs(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const uid = Number(execFileSync('id', ['-u', 'nobody'], { encoding: 'utf8' }).trim());
  const gid = Number(execFileSync('id', ['-g', 'nobody'], { encoding: 'utf8' }).trim());
  return { uid, gid };
}

export async function startCluster(): Promise<Cluster> {
  const bin = binDir();
  const user = runAs();
  // As root the cluster runs as nobody, who must reach its folder: under /tmp itself, not a
  // private TMPDIR (an extension host's is 0700).
  const dir = mkdtempSync(path.join(user ? '/tmp' : os.tmpdir(), 'test-inbox-pg-'));
  const data = path.join(dir, 'data');
  const pwfile = path.join(dir, 'pw');
  writeFileSync(pwfile, PG_PASSWORD + '\n', { mode: 0o600 });
  if (user) {
    chownSync(dir, user.uid, user.gid);
    chownSync(pwfile, user.uid, user.gid);
  }
  const run = (cmd: string, args: string[]): void => {
    const r = spawnSync(path.join(bin, cmd), args, { encoding: 'utf8', cwd: dir, ...(user ?? {}), env: { ...process.env, LC_ALL: 'C' } });
    if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed (${r.status ?? r.signal}):\n${r.stdout}\n${r.stderr}`);
  };
  run('initdb', ['-D', data, '-U', PG_USER, '--pwfile', pwfile, '--auth-local=trust', '--auth-host=scram-sha-256', '-E', 'UTF8', '--no-instructions']);
  const port = await freePort();
  // The data is thrown away after: fsync off keeps the suites fast (the server's own ack-after-commit is what the tests check).
  const opts = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off -c max_connections=200`;
  const start = (): void => run('pg_ctl', ['-D', data, '-l', path.join(dir, 'log'), '-o', opts, '-w', '-t', '60', 'start']);
  const stop = (): void => run('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']);
  start();
  let counter = 0;
  const url = (db = 'postgres', password = PG_PASSWORD): string => `postgres://${PG_USER}:${encodeURIComponent(password)}@127.0.0.1:${port}/${db}`;
  let destroyed = false;
  return {
    port,
    url,
    async createDatabase(prefix = 'ti') {
      const name = `${prefix}_${process.pid}_${++counter}`;
      const c = new pg.Client({ connectionString: url() });
      await c.connect();
      try {
        await c.query(`CREATE DATABASE ${name}`);
      } finally {
        await c.end();
      }
      return url(name);
    },
    stop,
    start,
    destroy() {
      if (destroyed) return;
      destroyed = true;
      try {
        stop();
      } catch {
        // already stopped
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

let shared: Promise<Cluster> | undefined;

/** One cluster per test process, started on first use and removed when the process exits. */
export function sharedCluster(): Promise<Cluster> {
  if (!shared) {
    shared = startCluster();
    void shared.then((c) => atExit(`postgres cluster on port ${c.port}`, () => c.destroy()));
  }
  return shared;
}
