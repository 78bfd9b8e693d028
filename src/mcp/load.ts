// Loads the MCP protocol plumbing (./sdk.ts) on first use. In the bundles it is a file of its
// own, dist/mcp.js beside dist/cli.js (esbuild.mjs), so neither a server that is never asked
// for `/mcp` nor a MIME worker thread (which loads dist/cli.js) loads the SDK; from the
// sources it is ./sdk.ts.
type Sdk = typeof import('./sdk');

let loaded: Sdk | undefined;

export function loadMcpSdk(): Promise<Sdk> {
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    loaded ??= require('./sdk') as Sdk;
    return Promise.resolve(loaded);
  } catch (e) {
    return Promise.reject(e instanceof Error ? e : new Error(String(e)));
  }
}
