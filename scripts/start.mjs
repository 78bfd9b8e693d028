// `npm start`: builds, starts the local inbox server with a few sample messages (an HTML
// email with an attachment, a sign-up email with a code, an SMS with a code) and opens VS Code
// with the extension loaded, attached to that server:
//   - desktop VS Code when `code` is on PATH: `code --extensionDevelopmentPath=<clone>` in a
//     fresh profile whose settings point the extension at the server;
//   - otherwise code-server (the integration harness's, installed on first use into
//     ~/.cache/test-inbox/) with the extension in the workbench URL, which is printed to open.
// Everything keeps running until Ctrl+C, which stops the server and code-server and removes
// their temp folders.
//
//   npm start                              server on 2580/2525 (free ports if those are taken)
//   npm start -- --http-port 0 --smtp-port 0
//   npm start -- --no-editor               only the server and its samples
//   TEST_INBOX_EDITOR=code-server npm start    code-server even when `code` is on PATH
//   TEST_INBOX_DATA_DIR=<dir> npm start    keep the mail in <dir> (kept after Ctrl+C)
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync, promises as fsp } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join, resolve as resolvePath } from 'node:path';
import { fileURLToPath } from 'node:url';
import { require as tsRequire } from 'tsx/cjs/api';

/** @type {typeof import('../src/shared/contract')} */
const contract = tsRequire('../src/shared/contract.ts', import.meta.url);
/** The server's default ports (the extension's defaults too). */
const { DEFAULT_HTTP_PORT, DEFAULT_SMTP_PORT } = contract;

const root = resolvePath(fileURLToPath(new URL('..', import.meta.url)));
const options = parseArgs(process.argv.slice(2));

/** The temp folders: what stops (the server, code-server) may still be writing into them, so removal retries. */
const RM_RETRIES = { recursive: true, force: true, maxRetries: 10, retryDelay: 100 };
/** @type {import('./demoServer').DemoServer | undefined} */
let demo;
/** @type {{ stop(): Promise<void> } | undefined} */
let editor;
/** @type {string | undefined} */
let sessionDir;
let stopping = false;

// Ctrl+C reaches every process of the terminal's job (this one and the inbox server): this
// process stops the others in order (code-server, then the server, waiting for each to exit),
// then removes the temp folders and exits 0 (under `npm start`, npm waits for that exit and then
// re-raises the interrupt: its own status is 130, whatever this script returns). Installed before anything starts.
const shutdown = async (code) => {
  if (stopping) return;
  stopping = true;
  process.stdout.write('\nStopping…\n');
  await editor?.stop().catch((e) => process.stderr.write(`Stopping code-server: ${e instanceof Error ? e.message : String(e)}\n`));
  await demo?.stop().catch((e) => process.stderr.write(`Stopping the server: ${e instanceof Error ? e.message : String(e)}\n`));
  if (sessionDir) await fsp.rm(sessionDir, RM_RETRIES).catch((e) => process.stderr.write(`Could not remove ${sessionDir}: ${e.message}\n`));
  process.exit(code);
};
process.on('SIGINT', () => void shutdown(0));
process.on('SIGTERM', () => void shutdown(0));
// Whatever else ends this process (an error, the server dying) ends the server and removes the
// temp folders; code-server's own group is ended by the harness's exit handler. Never throws.
process.on('exit', () => {
  if (demo && demo.child.exitCode === null) demo.child.kill('SIGTERM');
  if (!sessionDir) return;
  try {
    rmSync(sessionDir, RM_RETRIES);
  } catch (e) {
    process.stderr.write(`Could not remove ${sessionDir}: ${e instanceof Error ? e.message : String(e)}\n`);
  }
});

execFileSync(process.execPath, [join(root, 'esbuild.mjs')], { cwd: root, stdio: 'inherit' });

/** @type {typeof import('./demoServer')} */
const demoModule = tsRequire('./demoServer.ts', import.meta.url);
const { startDemoServer, seedSamples, DemoServerError, SAMPLES } = demoModule;

sessionDir = mkdtempSync(join(tmpdir(), 'test-inbox-start-'));
const keptDataDir = process.env.TEST_INBOX_DATA_DIR;
const dataDir = keptDataDir ?? join(sessionDir, 'data');
mkdirSync(dataDir, { recursive: true });

try {
  demo = await startServer();
} catch (err) {
  fail(err);
}
demo.child.once('exit', (code, signal) => {
  if (stopping) return;
  process.stderr.write(`The local server stopped (${code ?? signal}).\n`);
  void shutdown(code || 1);
});
await seedSamples(demo).catch(fail);

console.log(`
Test Inbox local server is running, with sample messages.
  HTTP API   ${demo.http}   (Authorization: ${demo.apiToken})
  SMTP       ${demo.smtpHost}:${demo.smtpPort}   (no auth, no TLS; any address@any domain)
  Data       ${dataDir}${keptDataDir ? '' : '   (removed on exit)'}

Try:
  curl -H 'Authorization: ${demo.apiToken}' ${demo.http}/api/v2/domains/private/inboxes/${SAMPLES.emailInbox}
  curl -H 'Authorization: ${demo.apiToken}' ${demo.http}/api/v2/domains/private/inboxes/${SAMPLES.smsInbox}
  curl -X POST -H 'Content-Type: application/json' -d '{"from":"ci","subject":"Hello","text":"Your code is 424242"}' \\
    ${demo.http}/api/v2/domains/${demo.webhookToken}/webhook/demo/
`);

if (options.editor) {
  try {
    editor = await openEditor(demo);
  } catch (err) {
    process.stderr.write(`Could not open VS Code: ${err instanceof Error ? err.message : String(err)}\nThe server keeps running.\n`);
  }
}
console.log('Press Ctrl+C to stop.');

/** Starts the CLI on the requested ports; falls back to free ports when the defaults are taken. */
async function startServer() {
  const wanted = { dataDir, httpPort: options.httpPort ?? DEFAULT_HTTP_PORT, smtpPort: options.smtpPort ?? DEFAULT_SMTP_PORT, extraArgs: options.rest };
  try {
    return await startDemoServer(wanted);
  } catch (err) {
    const defaults = options.httpPort === undefined && options.smtpPort === undefined;
    if (!defaults || !DemoServerError.is(err, 'port_in_use')) throw err;
    process.stderr.write(`Port ${DEFAULT_HTTP_PORT} or ${DEFAULT_SMTP_PORT} is in use (another Test Inbox window?); using free ports instead.\n`);
    return startDemoServer({ ...wanted, httpPort: 0, smtpPort: 0 });
  }
}

/** Desktop VS Code when `code` is on PATH (and not overridden), else code-server. */
async function openEditor(server) {
  const workspace = join(sessionDir, 'workspace');
  mkdirSync(workspace, { recursive: true });
  writeFileSync(
    join(workspace, 'README.md'),
    `# Test Inbox demo\n\nThe Test Inbox view (activity bar) shows the local server at ${server.http}.\nSend mail to any address at SMTP ${server.smtpHost}:${server.smtpPort}.\n`,
  );
  const code = process.env.TEST_INBOX_EDITOR === 'code-server' ? undefined : onPath(process.platform === 'win32' ? 'code.cmd' : 'code');
  if (code) {
    // A fresh profile: the extension's local.* settings are machine-scoped (user settings
    // only), and the user's own profile is left alone.
    const userData = join(sessionDir, 'vscode-user-data');
    mkdirSync(join(userData, 'User'), { recursive: true });
    writeFileSync(join(userData, 'User', 'settings.json'), JSON.stringify({ ...server.extensionSettings, 'workbench.startupEditor': 'none' }, null, 2) + '\n');
    const child = spawn(code, [`--extensionDevelopmentPath=${root}`, '--user-data-dir', userData, '--new-window', workspace], { stdio: 'inherit', shell: process.platform === 'win32' });
    await new Promise((resolve, reject) => {
      child.once('error', reject);
      child.once('exit', resolve);
    });
    console.log(`Opened VS Code (${code}) with the extension from ${root}; its Test Inbox view shows this server.`);
    return { stop: async () => {} };
  }
  const { startCodeServer } = tsRequire('./integration/workbench.ts', import.meta.url);
  const session = await startCodeServer({
    workspace,
    settings: server.extensionSettings,
    // For people: notifications show. The smoke-test driver (which hides every toast) is
    // only for the test harness's payload.
    smokeTestDriver: false,
    linkExtension: true,
    // This script stops code-server itself on Ctrl+C, before the inbox server (shutdown above).
    handleSignals: false,
    onProgress: (message) => process.stdout.write(`[code-server] ${message}\n`),
  });
  session.serverExited.catch((err) => {
    process.stderr.write(`${err.message}\n`);
    void shutdown(1);
  });
  console.log(`
VS Code (code-server) is running with the extension loaded. Open this URL in a browser:

  ${session.url}
`);
  return session;
}

/** The executable `name` found on PATH, or undefined. */
function onPath(name) {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (dir && existsSync(join(dir, name))) return join(dir, name);
  }
  return undefined;
}

function parseArgs(argv) {
  const o = { editor: true, httpPort: undefined, smtpPort: undefined, rest: [] };
  const port = (flag, text) => {
    if (!/^\d{1,5}$/.test(text ?? '') || Number(text) > 65535) fail(new Error(`${flag} needs a port number 0-65535 (0 picks a free one)`));
    return Number(text);
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--no-editor') o.editor = false;
    else if (a === '--http-port') o.httpPort = port(a, argv[++i]);
    else if (a === '--smtp-port') o.smtpPort = port(a, argv[++i]);
    else if (a === '--data-dir') fail(new Error('use TEST_INBOX_DATA_DIR=<dir> to choose the data folder'));
    else o.rest.push(a);
  }
  return o;
}

function fail(err) {
  process.stderr.write(`npm start: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
}
