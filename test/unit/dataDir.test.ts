// The data folder's default per platform (src/shared/contract.ts): the pure path logic for
// win32, darwin and linux run here on any machine (the platform and home are parameters), and
// the rule that keeps an earlier version's folder in use, on real temp folders.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { defaultDataDir, discoveryDataDirs, holdsData, legacyDataDir, resolveDefaultDataDir } from '../../src/shared/contract';

// A user profile with a space and non-ASCII letters (NFC), as Windows and macOS make them.
const WIN_HOME = 'C:\\Users\\José Núñez';
const MAC_HOME = '/Users/José Núñez';
const LINUX_HOME = '/home/josé núñez';

describe('defaultDataDir per platform (pure)', () => {
  it('Windows: %LOCALAPPDATA%\\test-inbox', () => {
    assert.equal(defaultDataDir({ LOCALAPPDATA: 'C:\\Users\\José Núñez\\AppData\\Local' }, 'win32', WIN_HOME), 'C:\\Users\\José Núñez\\AppData\\Local\\test-inbox');
  });

  it('Windows without LOCALAPPDATA (or with a relative one): <home>\\AppData\\Local\\test-inbox', () => {
    const expected = 'C:\\Users\\José Núñez\\AppData\\Local\\test-inbox';
    assert.equal(defaultDataDir({}, 'win32', WIN_HOME), expected);
    assert.equal(defaultDataDir({ LOCALAPPDATA: '' }, 'win32', WIN_HOME), expected);
    assert.equal(defaultDataDir({ LOCALAPPDATA: 'AppData\\Local' }, 'win32', WIN_HOME), expected);
  });

  it('macOS: ~/Library/Application Support/test-inbox', () => {
    assert.equal(defaultDataDir({}, 'darwin', MAC_HOME), '/Users/José Núñez/Library/Application Support/test-inbox');
  });

  it('Linux (and other Unix): ~/.local/share/test-inbox', () => {
    assert.equal(defaultDataDir({}, 'linux', LINUX_HOME), '/home/josé núñez/.local/share/test-inbox');
    assert.equal(defaultDataDir({}, 'freebsd', LINUX_HOME), '/home/josé núñez/.local/share/test-inbox');
  });

  it('XDG_DATA_HOME, when set and absolute, wins on every platform; a relative one is ignored', () => {
    assert.equal(defaultDataDir({ XDG_DATA_HOME: '/xdg data', LOCALAPPDATA: 'C:\\Local' }, 'linux', LINUX_HOME), '/xdg data/test-inbox');
    assert.equal(defaultDataDir({ XDG_DATA_HOME: '/Users/José Núñez/xdg' }, 'darwin', MAC_HOME), '/Users/José Núñez/xdg/test-inbox');
    assert.equal(defaultDataDir({ XDG_DATA_HOME: 'D:\\xdg', LOCALAPPDATA: 'C:\\Local' }, 'win32', WIN_HOME), 'D:\\xdg\\test-inbox');
    assert.equal(defaultDataDir({ XDG_DATA_HOME: 'xdg' }, 'linux', LINUX_HOME), '/home/josé núñez/.local/share/test-inbox');
    assert.equal(defaultDataDir({ XDG_DATA_HOME: 'xdg' }, 'darwin', MAC_HOME), '/Users/José Núñez/Library/Application Support/test-inbox');
    assert.equal(defaultDataDir({ XDG_DATA_HOME: 'xdg', LOCALAPPDATA: 'C:\\Local' }, 'win32', WIN_HOME), 'C:\\Local\\test-inbox');
  });

  it('defaults to this machine: process.platform and os.homedir()', () => {
    assert.equal(defaultDataDir({}), defaultDataDir({}, process.platform, os.homedir()));
  });
});

describe('legacyDataDir: the default of earlier versions (pure)', () => {
  it('is ~/.local/share/test-inbox on Windows and macOS, where the default moved', () => {
    assert.equal(legacyDataDir({ LOCALAPPDATA: 'C:\\Local' }, 'win32', WIN_HOME), 'C:\\Users\\José Núñez\\.local\\share\\test-inbox');
    assert.equal(legacyDataDir({}, 'darwin', MAC_HOME), '/Users/José Núñez/.local/share/test-inbox');
  });

  it('is none on Linux, and none wherever XDG_DATA_HOME is set (the default did not move)', () => {
    assert.equal(legacyDataDir({}, 'linux', LINUX_HOME), undefined);
    assert.equal(legacyDataDir({ XDG_DATA_HOME: '/xdg' }, 'darwin', MAC_HOME), undefined);
    assert.equal(legacyDataDir({ XDG_DATA_HOME: 'D:\\xdg' }, 'win32', WIN_HOME), undefined);
  });
});

describe('resolveDefaultDataDir: an earlier version’s folder stays in use while it holds data', () => {
  // A real home folder whose name has a space and non-ASCII letters, and real folders in it:
  // macOS's rule on POSIX (its paths work on this file system), Windows' own under Windows' Node
  // (npm run test:windows).
  const platform: NodeJS.Platform = process.platform === 'win32' ? 'win32' : 'darwin';
  let home: string;
  let modern: string;
  let legacy: string;

  beforeEach(() => {
    home = mkdtempSync(path.join(os.tmpdir(), 'test-inbox-home José Núñez-'));
    modern = platform === 'win32' ? path.join(home, 'AppData', 'Local', 'test-inbox') : path.join(home, 'Library', 'Application Support', 'test-inbox');
    legacy = path.join(home, '.local', 'share', 'test-inbox');
  });

  afterEach(() => rmSync(home, { recursive: true, force: true }));

  const fill = (dir: string, file = 'tokens.json'): void => {
    mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(dir, file), '{}');
  };

  it('uses the platform default when neither folder exists (a new user)', () => {
    assert.equal(resolveDefaultDataDir({}, platform, home), modern);
    assert.deepEqual(discoveryDataDirs({}, platform, home), [modern, legacy]);
  });

  it('uses the legacy folder when it holds data and the platform default does not', () => {
    fill(legacy);
    assert.equal(resolveDefaultDataDir({}, platform, home), legacy);
    mkdirSync(modern, { recursive: true }); // made empty (by hand, by a `mkdir -p`): still no data
    assert.equal(resolveDefaultDataDir({}, platform, home), legacy);
    assert.deepEqual(discoveryDataDirs({}, platform, home), [legacy]);
  });

  it('uses the platform default once it holds data, even when the legacy folder does too', () => {
    fill(legacy);
    fill(modern);
    assert.equal(resolveDefaultDataDir({}, platform, home), modern);
    assert.deepEqual(discoveryDataDirs({}, platform, home), [modern, legacy]);
  });

  it('an empty legacy folder is not used', () => {
    mkdirSync(legacy, { recursive: true });
    assert.equal(resolveDefaultDataDir({}, platform, home), modern);
  });

  it('XDG_DATA_HOME wins over both folders, whatever they hold', () => {
    fill(legacy);
    const xdg = path.join(home, 'xdg');
    assert.equal(resolveDefaultDataDir({ XDG_DATA_HOME: xdg }, platform, home), path.join(xdg, 'test-inbox'));
    assert.deepEqual(discoveryDataDirs({ XDG_DATA_HOME: xdg }, platform, home), [path.join(xdg, 'test-inbox')]);
  });

  it('on Linux the two are one folder: no other folder is looked at', function () {
    // Linux's POSIX paths under a Windows home folder name no real folder.
    if (process.platform === 'win32') this.skip();
    fill(legacy);
    assert.equal(resolveDefaultDataDir({}, 'linux', home), legacy);
    assert.deepEqual(discoveryDataDirs({}, 'linux', home), [legacy]);
  });

  it('holdsData: a folder with any entry; not an empty, missing or non-folder path', () => {
    assert.equal(holdsData(legacy), false);
    mkdirSync(legacy, { recursive: true });
    assert.equal(holdsData(legacy), false);
    fill(legacy, '.lock');
    assert.equal(holdsData(legacy), true);
    assert.equal(holdsData(path.join(legacy, '.lock')), false);
  });
});
