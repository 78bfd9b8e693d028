// Lint, including the layer rules of docs/architecture.md ("Layers"): each folder of src/ may
// import only what its layer allows, so a wrong import fails `npm run lint` instead of review.
import { builtinModules } from 'node:module';
import tseslint from 'typescript-eslint';

const noVscode = { name: 'vscode', message: 'vscode is imported only under src/extension/: core, api, server and the webview UI run without it.' };
/** undici stays a dev dependency (bench/): bundled, it is most of the extension's size. */
const noUndici = { name: 'undici', message: "use the runtime's fetch (Node's built-in undici, proxy-aware in VS Code): the undici package is a dev dependency for bench/ only." };

/** What nothing under src/server imports: the editor side, the CLI above it, and the test library (a client, whose connection is src/api/node/connect.ts). */
const serverUp = { regex: '(^|/)(extension|webview-ui|cli|testing)(/|$)', message: 'src/server never imports the extension, the webview UI, the CLI or the test library (its connection is src/api/node/connect.ts).' };

/** What no file of src/extension imports: the server and the CLI, and of the webview UI all but the pure view content. */
const extensionOut = [
  { regex: '(^|/)(server|cli)(/|$)', message: 'the extension runs the server as a child process: it shares only src/shared (the process contract) with it.' },
  { regex: '(^|/)webview-ui/(?!viewContent$)', message: 'the extension imports of src/webview-ui only the pure view content (the protocol is src/shared/viewProtocol.ts).' },
];

/** Node's built-in modules by their bare names (`fs`, `path`…), each forbidden with `message` (`node:*` is a pattern). */
function noNodeIn(message) {
  return builtinModules.filter((m) => !m.startsWith('_')).map((name) => ({ name, message }));
}

/** One no-restricted-imports rule: forbidden module names and specifier patterns. */
function restrict(paths, patterns) {
  return { '@typescript-eslint/no-restricted-imports': ['error', { paths, patterns }] };
}

export default tseslint.config(
  { ignores: ['dist/**', 'out/**', 'node_modules/**', '.test-output/**', 'media/**', '*-sourcemaps/**'] },
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    // Type-aware rules, for the product's code, its tests and scripts: a promise is awaited,
    // returned, or handed off with an explicit `void` (and a reason where it is not obvious);
    // none is dropped by mistake. Each file is checked in its own project (DOM only for the view).
    files: ['src/**/*.ts', 'test/**/*.ts', 'scripts/**/*.ts'],
    languageOptions: {
      parserOptions: {
        project: ['./tsconfig.json', './src/webview-ui/tsconfig.json', './tsconfig.browser.json'],
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
    },
  },
  {
    // core: pure logic every side shares; it imports nothing of the project outside itself.
    files: ['src/core/**'],
    rules: restrict([noVscode], [{ regex: '^\\.\\./', message: 'src/core imports nothing of api, server, extension or webview-ui.' }]),
  },
  {
    // api: the HTTP client; of the project only core. Outside node/ it runs in a browser too
    // (src/api/tsconfig.json checks it without Node types): no Node module, by either name.
    files: ['src/api/**'],
    ignores: ['src/api/node/**'],
    rules: restrict(
      [noVscode, noUndici, ...noNodeIn('src/api outside node/ runs in a browser too: Node modules only under src/api/node/.')],
      [
        { regex: '^\\.\\./(?!core/)', message: 'src/api imports of the project only src/core (never the server).' },
        { regex: '^node:', message: 'src/api outside node/ runs in a browser too: Node modules only under src/api/node/.' },
        { regex: '^\\./node/', message: 'the part of src/api that runs anywhere does not import its Node part (src/api/node/).' },
      ],
    ),
  },
  {
    // api/node: the Node part of the client (the discovery of a local server, node/connect.ts):
    // of the project the rest of src/api, core and the process contract in src/shared.
    files: ['src/api/node/**'],
    rules: restrict([noVscode, noUndici], [{ regex: '^\\.\\./\\.\\./(?!core/|shared/)', message: 'src/api/node imports of the project only src/api, src/core and src/shared (never the server or the test library).' }]),
  },
  {
    // shared: what several layers import: the process contract, the data folder, flag parsing,
    // the message-view protocol. Of the project only core.
    files: ['src/shared/**'],
    rules: restrict([noVscode, noUndici], [{ regex: '^\\.\\./(?!core/)', message: 'src/shared imports of the project only src/core.' }]),
  },
  {
    // cli: `test-inbox` (serve, mcp and the test commands), above the server, the library and
    // the MCP tools it dispatches to; never the editor side.
    files: ['src/cli/**'],
    rules: restrict([noVscode], [{ regex: '(^|/)(extension|webview-ui)(/|$)', message: 'src/cli never imports the extension or the webview UI.' }]),
  },
  {
    // server: the local inbox server; never the editor side, never the CLI above it.
    files: ['src/server/**'],
    rules: restrict([noVscode, noUndici], [serverUp]),
  },
  {
    // store: the interface (store/types.ts) and what every store shares (store/*.ts) know no
    // store; the Maildir store (store/maildir/) and the PostgreSQL store (store/postgres/)
    // implement it without importing each other.
    files: ['src/server/store/*.ts'],
    rules: restrict([noVscode, noUndici], [serverUp, { regex: '^\\./(maildir|postgres)/', message: 'the store interface and shared store code import no store implementation.' }]),
  },
  {
    files: ['src/server/store/maildir/**'],
    rules: restrict([noVscode, noUndici], [serverUp, { regex: '(^|/)postgres(/|$)', message: 'the Maildir store never imports the PostgreSQL store (shared code lives in src/server/store/*.ts).' }]),
  },
  {
    files: ['src/server/store/postgres/**'],
    rules: restrict([noVscode, noUndici], [serverUp, { regex: '(^|/)maildir(/|$)', message: 'the PostgreSQL store never imports the Maildir store (shared code lives in src/server/store/*.ts).' }]),
  },
  {
    // testing: the library for test runners; a client of the server like any test (the process
    // contract is in src/shared): nothing of src/server, the CLI, the extension or the view.
    files: ['src/testing/**'],
    rules: restrict(
      [noVscode],
      [
        { regex: '(^|/)(extension|webview-ui|cli)(/|$)', message: 'src/testing never imports the extension, the webview UI or the CLI.' },
        { regex: '(^|/)server(/|$)', message: 'src/testing imports nothing of src/server (the contract is src/shared/contract.ts): it talks to the server over HTTP and SMTP.' },
      ],
    ),
  },
  {
    // extension: runs the server as a child process and talks to it through src/api; shares with it
    // only src/core and src/shared (the process contract, the view protocol, provider settings).
    files: ['src/extension/**'],
    rules: restrict([noUndici], extensionOut),
  },
  {
    // The extension's lower floors: the tree, the settings and secrets, and the connection sit
    // below the commands, the pickers and notifications, and the message panel, and never import
    // them (scripts/check-floors.mjs checks the whole floor plan of src/extension).
    files: ['src/extension/tree/**', 'src/extension/config/**', 'src/extension/connection/**'],
    rules: restrict(
      [noUndici],
      [...extensionOut, { regex: '(^|/)(commands|ui|messagePanel)(/|$)', message: 'tree/, config/ and connection/ never import commands/, ui/ or messagePanel/: those sit above them.' }],
    ),
  },
  {
    // mcp: the MCP tools (tools.ts, no SDK) and the SDK plumbing (sdk.ts); a client of the
    // server like the test library: the API client and its connection (src/api/node/connect.ts),
    // and src/shared; nothing of the server, the CLI, the test library or the extension.
    files: ['src/mcp/**'],
    rules: restrict(
      [noVscode, noUndici],
      [
        { regex: '(^|/)webview-ui(/|$)', message: 'src/mcp never imports the webview UI.' },
        { regex: '(^|/)extension(/|$)', message: 'src/mcp imports nothing of the extension: the queries it shares with the language-model tools are src/api/queries.ts.' },
        { regex: '^\\.\\./(server|cli)/', message: 'src/mcp imports nothing of src/server or the CLI (the contract is src/shared/contract.ts).' },
        { regex: '^\\.\\./testing/', message: 'src/mcp imports nothing of the test library: its connection is src/api/node/connect.ts, its errors src/api/errors.ts failureOf.' },
      ],
    ),
  },
  {
    // The MCP SDK is loaded only when an MCP request comes (src/mcp/load.ts): only src/mcp/sdk.ts,
    // bundled apart as dist/mcp.js, imports it.
    files: ['src/**'],
    ignores: ['src/mcp/sdk.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [{ group: ['@modelcontextprotocol/*'], message: 'only src/mcp/sdk.ts imports the MCP SDK (loaded lazily through src/mcp/load.ts).' }] }] },
  },
  {
    // Mail text reaches notifications and the status bar only as `Inert` text (core/inert.ts):
    // every such call goes through ui/shown.ts, whose functions take nothing else.
    files: ['src/extension/**'],
    ignores: ['src/extension/ui/shown.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector: 'MemberExpression[property.name=/^(showInformationMessage|showWarningMessage|showErrorMessage|setStatusBarMessage)$/]',
          message: 'Show notifications and status-bar messages through src/extension/ui/shown.ts (Inert text only).',
        },
      ],
    },
  },
  {
    // webview-ui: browser code of the message view and of the web UI's page; of the project only
    // core and the view protocol (src/shared/viewProtocol.ts), and of src/api its part that runs
    // in a browser (below); libraries such as DOMPurify are fine, Node is not.
    files: ['src/webview-ui/**'],
    ignores: ['src/webview-ui/page.ts'],
    rules: restrict(
      [noVscode, { name: 'undici', message: 'the webview UI has no network client.' }, ...noNodeIn('the webview UI runs in a browser: no Node modules.')],
      [
        { regex: '^\\.\\./(?!core/|shared/viewProtocol$|api/(types|validate)$)', message: 'src/webview-ui imports of the project only src/core, src/shared/viewProtocol.ts, and the API client types and response checks (the web UI page, page.ts, its client too).' },
        { regex: '^node:', message: 'the webview UI runs in a browser: no Node modules.' },
      ],
    ),
  },
  {
    // The web UI's page talks to its server through the one client, as every surface does:
    // createClient over the page's transport (api/browser.ts), the client's errors, paths,
    // checks and push stream. Never src/api/node/ (nor any other module of src/api: http.ts is
    // the client's own), never Node.
    files: ['src/webview-ui/page.ts'],
    rules: restrict(
      [noVscode, { name: 'undici', message: "the page's network client is src/api (createClient over api/browser.ts pageFetch)." }, ...noNodeIn('the web UI page runs in a browser: no Node modules.')],
      [
        {
          regex: '^\\.\\./(?!core/|shared/viewProtocol$|api/(client|browser|errors|paths|validate|sse|stream|types)$)',
          message: 'the web UI page imports of the project only src/core, src/shared/viewProtocol.ts, and the browser part of src/api (client, browser, errors, paths, validate, sse, stream, types), never src/api/node/.',
        },
        { regex: '^node:', message: 'the web UI page runs in a browser: no Node modules.' },
      ],
    ),
  },
  {
    // The browser code makes no request of its own: the web UI page's are its client's
    // (src/api), whose paths are api/paths.ts, so no API path is written here by hand again.
    files: ['src/webview-ui/**'],
    rules: {
      'no-restricted-syntax': [
        'error',
        // `api/…`, `/api/…`, `ui/…`, `/ui/…` (`\x2F` is `/`, which a selector's regex cannot hold).
        ...['Literal[value=/^\\x2F?(api|ui)\\x2F/]', 'TemplateElement[value.raw=/^\\x2F?(api|ui)\\x2F/]'].map((selector) => ({ selector, message: "API paths are the client's (src/api/paths.ts): call the page's client (createClient over src/api/browser.ts), never a path written here." })),
        ...["CallExpression[callee.name='fetch']", "CallExpression[callee.property.name='fetch']", "NewExpression[callee.name=/^(EventSource|XMLHttpRequest|WebSocket)$/]"].map((selector) => ({
          selector,
          message: "the browser code makes no request of its own: the page's client (src/api createClient over browser.ts pageFetch) makes them, with its checks, errors and stream reader.",
        })),
      ],
    },
  },
);
