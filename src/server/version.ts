// The version reported by `GET /healthz`, from package.json (bundled by esbuild).
import pkg from '../../package.json';

export const VERSION: string = pkg.version;
