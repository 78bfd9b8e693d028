// `npm start` as a user runs it without desktop VS Code: scripts/start.mjs builds, starts the
// local server with the samples and code-server with the extension, and prints the URL to
// open. The test opens that URL in Chromium, finds the samples in the tree, then sends the
// Ctrl+C signal and checks that the server, code-server and the temp folders are gone.
import * as assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { REPO_ROOT, SAMPLES } from '../../scripts/demoServer';
import { chromiumPath } from '../../scripts/integration/workbench';
import { TOKENS_FILE } from '../../src/shared/contract';
import { escapeRegExp, expandRow, keepFailure, openTestInboxView, runFromPalette, treeRow, UI_TIMEOUT_MS } from './ui';

/** Build, server, samples, code-server (already installed) and a workbench load on a busy machine. */
const TEST_TIMEOUT_MS = 240_000;
/** npm start prints the URL once code-server listens. */
const URL_TIMEOUT_MS = 120_000;
/** After Ctrl+C everything stops within seconds (a file watcher of code-server may take ~5 s). */
const EXIT_TIMEOUT_MS = 30_000;

/** Resolves with the first match of `pattern` in the child's stdout so far. */
function waitForOutput(child: ChildProcess, output: () => string, pattern: RegExp, timeoutMs: number): Promise<RegExpExecArray> {
  return new Promise((resolve, reject) => {
    const check = () => {
      const m = pattern.exec(output());
      if (!m) return false;
      cleanup();
      resolve(m);
      return true;
    };
    const onExit = (code: number | null) => {
      cleanup();
      reject(new Error(`npm start exited (${code}) before printing ${pattern}:\n${output()}`));
    };
    const timer = setTimeout(() => {
      cleanup();
      reject(new Error(`npm start did not print ${pattern} within ${timeoutMs / 1000} s:\n${output()}`));
    }, timeoutMs);
    const cleanup = () => {
      clearTimeout(timer);
      child.stdout?.off('data', check);
      child.off('exit', onExit);
    };
    child.stdout?.on('data', check);
    child.once('exit', onExit);
    check();
  });
}

async function isListening(url: string): Promise<boolean> {
  try {
    await fetch(url, { signal: AbortSignal.timeout(2000) });
    return true;
  } catch {
    return false;
  }
}

describe('e2e: npm start', function () {
  this.timeout(TEST_TIMEOUT_MS);
  let child: ChildProcess | undefined;
  let browser: Browser | undefined;
  let exited: Promise<number | null> | undefined;
  let output = '';

  beforeEach(() => {
    output = '';
    exited = undefined;
  });

  afterEach(async function () {
    if (this.currentTest?.state === 'failed') {
      const dir = await keepFailure(undefined, this.currentTest.title);
      fs.writeFileSync(path.join(dir, 'npm-start.log'), output);
      process.stderr.write(`e2e: output of npm start kept in ${dir}\n`);
    }
    await browser?.close().catch(() => {});
    browser = undefined;
    if (child && child.exitCode === null && child.signalCode === null) {
      child.kill('SIGINT');
      await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, EXIT_TIMEOUT_MS).unref())]);
    }
    child = undefined;
  });

  it('serves the samples in code-server at the printed URL, and Ctrl+C stops everything and removes its temp folders', async () => {
    const env: NodeJS.ProcessEnv = { ...process.env, TEST_INBOX_EDITOR: 'code-server' };
    delete env.TEST_INBOX_DATA_DIR;
    child = spawn(process.execPath, [path.join(REPO_ROOT, 'scripts', 'start.mjs'), '--http-port', '0', '--smtp-port', '0'], { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    const started = child;
    exited = new Promise<number | null>((resolve) => started.once('exit', (code) => resolve(code)));

    const [, api] = await waitForOutput(child, () => output, /HTTP API\s+(http:\/\/127\.0\.0\.1:\d+)/, URL_TIMEOUT_MS);
    const [, dataDir] = await waitForOutput(child, () => output, /Data\s+(\S+)/, URL_TIMEOUT_MS);
    const [url, codeServerPort] = await waitForOutput(child, () => output, /http:\/\/127\.0\.0\.1:(\d+)\/\?folder=\S+/, URL_TIMEOUT_MS);
    const sessionDir = path.dirname(dataDir);
    assert.ok(fs.existsSync(sessionDir), 'the session folder exists while npm start runs');

    const res = await fetch(url);
    assert.equal(res.status, 200, 'the printed URL serves the workbench');

    browser = await chromium.launch({ executablePath: chromiumPath(), headless: true, args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] });
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    await page.goto(url);
    await openTestInboxView(page);
    // A first run: the seeded samples start unread (the view's badge counts them too).
    await treeRow(page, new RegExp(`^Domain ${escapeRegExp(SAMPLES.domain)}, 2 inboxes, 3 unread`)).waitFor({ timeout: UI_TIMEOUT_MS });
    await expandRow(treeRow(page, new RegExp(`^Inbox ${SAMPLES.emailInbox}@${escapeRegExp(SAMPLES.domain)}`)));
    await treeRow(page, new RegExp(escapeRegExp(SAMPLES.signupSubject))).waitFor({ timeout: UI_TIMEOUT_MS });
    await treeRow(page, new RegExp(escapeRegExp(SAMPLES.reportSubject))).waitFor({ timeout: UI_TIMEOUT_MS });
    await expandRow(treeRow(page, new RegExp(`^SMS inbox ${SAMPLES.smsInbox}`)));
    await treeRow(page, /SMS from 15555550100/).waitFor({ timeout: UI_TIMEOUT_MS });

    // Notifications show as toasts for people (the test harness's smoke-test driver hides
    // them): Wait for Next Code's progress, with its Cancel button.
    await runFromPalette(page, 'Test Inbox: Wait for Next Code');
    await page.locator('.quick-input-widget input').fill(SAMPLES.emailInbox);
    await page.locator('.quick-input-list .monaco-list-row').filter({ hasText: SAMPLES.emailInbox }).first().waitFor({ timeout: UI_TIMEOUT_MS });
    await page.keyboard.press('Enter');
    const toast = page.locator('.notifications-toasts .notification-toast').filter({ hasText: new RegExp(escapeRegExp(SAMPLES.emailInbox)) });
    await toast.waitFor({ timeout: UI_TIMEOUT_MS });
    await toast.getByRole('button', { name: 'Cancel' }).click();
    await toast.waitFor({ state: 'detached', timeout: UI_TIMEOUT_MS });
    await browser.close();
    browser = undefined;

    child.kill('SIGINT');
    const timeout = new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), EXIT_TIMEOUT_MS).unref());
    assert.notEqual(await Promise.race([exited, timeout]), 'timeout', 'npm start ends after Ctrl+C');
    // code-server's file watcher may outlive its parent for a moment; the harness kills the group.
    assert.equal(await isListening(`${api}/healthz`), false, 'the inbox server is stopped');
    assert.equal(await isListening(`http://127.0.0.1:${codeServerPort}/healthz`), false, 'code-server is stopped');
    assert.equal(fs.existsSync(sessionDir), false, 'the temp data folder is removed');
  });

  it('Ctrl+C in the terminal (SIGINT to the whole process group) exits 0 without a stack trace and leaves no temp folder', async () => {
    // A terminal delivers Ctrl+C to every process of the foreground job: start.mjs and the
    // inbox server it spawned. TMPDIR is a folder of the test's own, so what is left is seen.
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'test-inbox-e2e-sigint-'));
    try {
      for (const editor of [['--no-editor'], []]) {
        output = '';
        const env: NodeJS.ProcessEnv = { ...process.env, TEST_INBOX_EDITOR: 'code-server', TMPDIR: tmp };
        delete env.TEST_INBOX_DATA_DIR;
        child = spawn(process.execPath, [path.join(REPO_ROOT, 'scripts', 'start.mjs'), '--http-port', '0', '--smtp-port', '0', ...editor], { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
        const started = child;
        exited = new Promise<number | null>((resolve) => started.once('exit', (code) => resolve(code)));
        child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
        child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
        const [, api] = await waitForOutput(child, () => output, /HTTP API\s+(http:\/\/127\.0\.0\.1:\d+)/, URL_TIMEOUT_MS);
        const codeServer = editor.length === 0 ? (await waitForOutput(child, () => output, /http:\/\/127\.0\.0\.1:(\d+)\/\?folder=\S+/, URL_TIMEOUT_MS))[1] : undefined;
        await waitForOutput(child, () => output, /Press Ctrl\+C to stop\./, URL_TIMEOUT_MS);
        assert.ok(fs.readdirSync(tmp).some((n) => n.startsWith('test-inbox-start-')), 'the session folder is in TMPDIR');

        process.kill(-child.pid!, 'SIGINT');
        const timeout = new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), EXIT_TIMEOUT_MS).unref());
        const code = await Promise.race([exited, timeout]);
        const what = editor.length === 0 ? 'with code-server' : 'without an editor';
        assert.equal(code, 0, `${what}: npm start exits 0 after Ctrl+C:\n${output}`);
        assert.doesNotMatch(output, /ENOTEMPTY|\n\s+at .+:\d+:\d+\)?\n/, `${what}: no stack trace`);
        assert.deepEqual(fs.readdirSync(tmp).filter((n) => n.startsWith('test-inbox-')), [], `${what}: no temp folder left in TMPDIR`);
        assert.equal(await isListening(`${api}/healthz`), false, `${what}: the inbox server is stopped`);
        if (codeServer) assert.equal(await isListening(`http://127.0.0.1:${codeServer}/healthz`), false, 'code-server is stopped');
        child = undefined;
      }
    } finally {
      fs.rmSync(tmp, { recursive: true, force: true });
    }
  });

  it('with `code` on PATH, launches it with the extension and a profile whose settings attach to the server', async () => {
    // A stand-in `code` that records how it was called: this checks the launcher's command
    // line and seeded settings, not desktop VS Code itself (not installed here).
    const binDir = fs.mkdtempSync(path.join(os.tmpdir(), 'test-inbox-e2e-bin-'));
    try {
      const record = path.join(binDir, 'called.json');
      const fake = path.join(binDir, 'code');
      fs.writeFileSync(
        fake,
        `#!${process.execPath}\nconst fs = require('fs'); const a = process.argv.slice(2); const u = a[a.indexOf('--user-data-dir') + 1];\n` +
          `fs.writeFileSync(${JSON.stringify(record)}, JSON.stringify({ args: a, settings: JSON.parse(fs.readFileSync(u + '/User/settings.json', 'utf8')) }));\n`,
        { mode: 0o755 },
      );
      const env: NodeJS.ProcessEnv = { ...process.env, PATH: `${binDir}${path.delimiter}${process.env.PATH ?? ''}` };
      delete env.TEST_INBOX_EDITOR;
      delete env.TEST_INBOX_DATA_DIR;
      child = spawn(process.execPath, [path.join(REPO_ROOT, 'scripts', 'start.mjs'), '--http-port', '0', '--smtp-port', '0'], { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
      const started = child;
      exited = new Promise<number | null>((resolve) => started.once('exit', (code) => resolve(code)));
      child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
      child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
      const [, api] = await waitForOutput(child, () => output, /HTTP API\s+(http:\/\/127\.0\.0\.1:\d+)/, URL_TIMEOUT_MS);
      const [, smtpPort] = await waitForOutput(child, () => output, /SMTP\s+127\.0\.0\.1:(\d+)/, URL_TIMEOUT_MS);
      await waitForOutput(child, () => output, /Opened VS Code/, URL_TIMEOUT_MS);

      const called = JSON.parse(fs.readFileSync(record, 'utf8')) as { args: string[]; settings: Record<string, unknown> };
      assert.ok(called.args.includes(`--extensionDevelopmentPath=${REPO_ROOT}`), called.args.join(' '));
      assert.equal(called.settings['testInbox.local.httpPort'], Number(new URL(api).port));
      assert.equal(called.settings['testInbox.local.smtpPort'], Number(smtpPort));
      const dataFolder = String(called.settings['testInbox.local.dataFolder']);
      assert.ok(fs.existsSync(path.join(dataFolder, TOKENS_FILE)), 'the data folder holds the tokens an attaching extension reads');

      child.kill('SIGINT');
      assert.equal(await exited, 0, 'Ctrl+C ends npm start cleanly');
      assert.equal(await isListening(`${api}/healthz`), false, 'the inbox server is stopped');
    } finally {
      fs.rmSync(binDir, { recursive: true, force: true });
    }
  });
});
