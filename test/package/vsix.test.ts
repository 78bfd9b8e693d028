// The VSIX written by `npm run package`, opened as the zip it is: only the bundles, the media
// the extension and its README use, the manifest, README, CHANGELOG and LICENSE; production
// bundles without source maps; a README the extension's details page can show (no local
// images, no links into a repository it does not have); at most VSIX_LIMIT_KB (bench/limits.ts). Reads the archive
// with Debian's `unzip`.
//
//   npm run package && npm run test:package
import assert from 'node:assert/strict';
import { VSIX_LIMIT_KB } from '../../bench/limits';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import * as path from 'node:path';

const REPO = path.resolve(__dirname, '..', '..');
const manifest = JSON.parse(readFileSync(path.join(REPO, 'package.json'), 'utf8')) as { name: string; version: string };
const VSIX = path.join(REPO, `${manifest.name}-${manifest.version}.vsix`);
const STAGE = path.join(REPO, 'out', 'package', 'vsix');
const VSIX_LIMIT_BYTES = VSIX_LIMIT_KB * 1024;

/** What the extension needs at run time, and nothing else. */
const EXPECTED_FILES = [
  'extension/package.json',
  'extension/readme.md',
  'extension/changelog.md',
  'extension/LICENSE.txt',
  'extension/dist/extension.js',
  'extension/dist/cli.js',
  'extension/dist/mimeWorker.js',
  'extension/dist/mcp.js',
  'extension/dist/webview.js',
  'extension/media/icon.png',
  'extension/media/inbox.svg',
  'extension/media/messageView.css',
  'extension/media/codicons/codicon.css',
  'extension/media/codicons/codicon.ttf',
  'extension/media/codicons/LICENSE',
  'extension/media/codicons/LICENSE-CODE',
];

function entries(): string[] {
  return execFileSync('unzip', ['-Z1', VSIX], { encoding: 'utf8' }).trim().split('\n');
}

function read(entry: string): string {
  return execFileSync('unzip', ['-p', VSIX, entry], { encoding: 'utf8', maxBuffer: 16 * 1024 * 1024 });
}

describe('the VSIX', () => {
  before(function () {
    assert.ok(existsSync(VSIX), `${path.basename(VSIX)} is missing: run \`npm run package\` first`);
  });

  it(`is at most ${VSIX_LIMIT_BYTES / 1024} KB`, () => {
    assert.ok(statSync(VSIX).size <= VSIX_LIMIT_BYTES, `${statSync(VSIX).size} bytes`);
  });

  it('keeps the MCP SDK out of dist/cli.js (every MIME worker thread loads it) and in dist/mcp.js, loaded on demand', () => {
    // "tools/list" is a method name of the SDK's protocol schemas; the tools' own module never spells it.
    assert.ok(!read('extension/dist/cli.js').includes('"tools/list"'), 'cli.js does not carry the SDK');
    assert.ok(read('extension/dist/mcp.js').includes('"tools/list"'), 'mcp.js does');
    assert.ok(read('extension/dist/cli.js').includes('require("./mcp.js")'), 'cli.js loads it from beside itself');
  });

  it('holds only the bundles, the media in use, the manifest and the docs', () => {
    const files = entries().filter((e) => !e.endsWith('/'));
    assert.deepEqual(files.filter((f) => f.startsWith('extension/')).sort(), [...EXPECTED_FILES].sort());
    assert.deepEqual(files.filter((f) => !f.startsWith('extension/')).sort(), ['[Content_Types].xml', 'extension.vsixmanifest']);
  });

  it('lists the same files with `vsce ls` in its staging folder', () => {
    const vsce = path.join(REPO, 'node_modules', '@vscode', 'vsce', 'vsce');
    const listed = execFileSync(process.execPath, [vsce, 'ls'], { cwd: STAGE, encoding: 'utf8' }).trim().split('\n').sort();
    const expected = EXPECTED_FILES.map((f) => f.slice('extension/'.length).replace(/^readme\.md$/, 'README.md').replace(/^changelog\.md$/, 'CHANGELOG.md').replace(/^LICENSE\.txt$/, 'LICENSE')).sort();
    assert.deepEqual(listed, expected);
  });

  it('carries minified production bundles without source maps or references to them', () => {
    for (const bundle of ['extension', 'cli', 'webview']) {
      const js = read(`extension/dist/${bundle}.js`);
      assert.doesNotMatch(js, /sourceMappingURL/, `${bundle}.js names no map`);
      // Minified: long lines (a development bundle averages ~40 characters a line; template
      // literals keep their own line breaks in a minified one).
      const perLine = js.length / js.split('\n').length;
      assert.ok(perLine > 500, `${bundle}.js averages ${perLine.toFixed(0)} characters a line`);
    }
    assert.ok(existsSync(path.join(REPO, `${manifest.name}-${manifest.version}-sourcemaps`, 'extension.js.map')), 'the maps are kept beside the package');
  });

  it('ships the manifest without the repository-only fields', () => {
    const shipped = JSON.parse(read('extension/package.json')) as Record<string, unknown>;
    assert.equal(shipped.version, manifest.version);
    for (const key of ['scripts', 'devDependencies', 'dependencies', 'bin']) assert.equal(shipped[key], undefined, key);
    assert.equal(shipped.main, './dist/extension.js');
  });

  it('has a README the details page can show: no local images, no links into the repository', () => {
    const readme = read('extension/readme.md');
    assert.match(readme, /^# Test Inbox/);
    assert.match(readme, /## Install/);
    assert.doesNotMatch(readme, /!\[[^\]]*\]\((?!https:|data:)/, 'no image the page cannot load');
    assert.doesNotMatch(readme, /\]\((?!https?:|mailto:|#|data:)[^)]+\)/, 'no relative link');
    assert.doesNotMatch(read('extension/changelog.md'), /\]\((?!https?:|mailto:|#|data:)[^)]+\)/);
  });
});

describe('packagedMarkdown (the README of the VSIX)', () => {
  // An ES module (scripts/package.mjs runs under plain Node); this suite is CommonJS.
  let packagedMarkdown: (markdown: string) => string;
  before(async () => {
    ({ packagedMarkdown } = await import('../../scripts/packagedMarkdown.mjs'));
  });

  it('drops a line or a table made only of local images, keeps https and data images', () => {
    const md = [
      '# T',
      '',
      '![shot](media/a.png)',
      '',
      '| Dark | SMS |',
      '|---|---|',
      '| ![a](media/b.png) | ![b](media/c.png) |',
      '',
      'Logo ![x](https://example.com/x.png) and ![y](data:image/png;base64,AAAA) stay.',
      'Plain http ![z](http://example.com/z.png) goes.',
    ].join('\n');
    assert.equal(packagedMarkdown(md), ['# T', '', 'Logo ![x](https://example.com/x.png) and ![y](data:image/png;base64,AAAA) stay.', 'Plain http  goes.'].join('\n'));
  });

  it('turns links to repository files into their text and leaves absolute links and anchors', () => {
    assert.equal(packagedMarkdown('See [the API](docs/api.md), [site](https://example.com) and [below](#limits).'), 'See the API, [site](https://example.com) and [below](#limits).');
  });

  it('leaves fenced code alone and keeps tables that hold text', () => {
    const md = ['```md', '![kept](a.png) [kept](b.md)', '```', '| a | [b](c.md) |', '|---|---|', '| 1 | 2 |'].join('\n');
    assert.equal(packagedMarkdown(md), ['```md', '![kept](a.png) [kept](b.md)', '```', '| a | b |', '|---|---|', '| 1 | 2 |'].join('\n'));
  });
});
