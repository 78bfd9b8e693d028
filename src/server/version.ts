// The release version of the server and the extension. esbuild defines it from package.json
// in every bundle (esbuild.mjs); code run from source (tsx) reads package.json instead.
import { readFileSync } from 'node:fs';
import * as path from 'node:path';

declare const __TEST_INBOX_VERSION__: string | undefined;

function fromPackageJson(): string {
  try {
    return (JSON.parse(readFileSync(path.join(__dirname, '..', '..', 'package.json'), 'utf8')) as { version: string }).version;
  } catch {
    return 'unknown';
  }
}

export const VERSION: string = typeof __TEST_INBOX_VERSION__ === 'string' ? __TEST_INBOX_VERSION__ : fromPackageJson();
