// Self-test of the integration runner: starts the real runner (code-server + Chromium) on
// fixture suites and checks its verdict, exit code and kept logs. Each case opens a real
// workbench, so this is not part of `npm test`; run it after changing scripts/integration:
//
//   npm run test:integration:runner
import * as assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ENV, REPO_ROOT } from '../config';

const FIXTURES = path.join(__dirname, 'fixtures');
const RUNNER = path.join(REPO_ROOT, 'scripts', 'integration', 'run.ts');
const TSX = path.join(REPO_ROOT, 'node_modules', '.bin', 'tsx');

interface RunResult {
  code: number | null;
  output: string;
}

function runRunner(args: string[], env: Record<string, string>): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(TSX, [RUNNER, ...args], {
      cwd: REPO_ROOT,
      env: { ...process.env, [ENV.runner]: 'code-server', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.once('error', reject);
    child.once('exit', (code) => resolve({ code, output }));
  });
}

describe('integration runner (scripts/integration/run.ts)', function () {
  // Each case starts code-server and Chromium; a busy 2-core machine needs a minute or two.
  this.timeout(5 * 60_000);

  let outputDir: string;
  beforeEach(() => {
    outputDir = fs.mkdtempSync(path.join(os.tmpdir(), 'test-inbox-it-selftest-'));
  });
  afterEach(() => {
    fs.rmSync(outputDir, { recursive: true, force: true });
  });

  it('passes and names its runner when every suite passes', async () => {
    const { code, output } = await runRunner([], { [ENV.suitesDir]: path.join(FIXTURES, 'passing'), [ENV.outputDir]: outputDir });
    assert.equal(code, 0, output);
    assert.match(output, /runner: code-server/);
    assert.match(output, /sees the vscode API of a real extension host/);
    assert.match(output, /1 passing, 0 pending, 0 failing on code-server/);
    assert.deepEqual(fs.readdirSync(outputDir), [], 'a passing run keeps no logs');
  });

  it('exits non-zero, relays the failure and keeps logs and a screenshot when a test fails', async () => {
    const { code, output } = await runRunner([], { [ENV.suitesDir]: path.join(FIXTURES, 'failing'), [ENV.outputDir]: outputDir });
    assert.equal(code, 1, output);
    assert.match(output, /fails on purpose so the runner must report failure/);
    assert.match(output, /FAILED \(TESTS_FAILED\): 1 of 2 integration tests failed/);
    const kept = fs.readdirSync(outputDir);
    assert.equal(kept.length, 1, output);
    const files = fs.readdirSync(path.join(outputDir, kept[0]));
    for (const name of ['code-server.log', 'workbench.log', 'workbench.png']) assert.ok(files.includes(name), `${name} kept: ${files.join(', ')}`);
  });

  it('exits non-zero when the grep pattern selects no test', async () => {
    const { code, output } = await runRunner(['--grep', 'no test is named like this'], {
      [ENV.suitesDir]: path.join(FIXTURES, 'passing'),
      [ENV.outputDir]: outputDir,
    });
    assert.equal(code, 1, output);
    assert.match(output, /FAILED \(NO_TESTS\)/);
  });

  it('exits non-zero when the run exceeds its timeout', async () => {
    const { code, output } = await runRunner([], {
      [ENV.suitesDir]: path.join(FIXTURES, 'passing'),
      [ENV.outputDir]: outputDir,
      [ENV.timeout]: '1',
    });
    assert.equal(code, 1, output);
    assert.match(output, /FAILED \(TIMEOUT\)/);
  });

  it('fails with the packages to install when Chromium is missing', async () => {
    const { code, output } = await runRunner([], {
      [ENV.suitesDir]: path.join(FIXTURES, 'passing'),
      [ENV.outputDir]: outputDir,
      [ENV.chromium]: path.join(outputDir, 'no-chromium-here'),
    });
    assert.equal(code, 1, output);
    assert.match(output, /FAILED \(NO_RUNNER\): Chromium not found/);
    assert.match(output, /apt-get install chromium/);
  });
});
