import tseslint from 'typescript-eslint';

const noVscode = {
  paths: [{ name: 'vscode', message: 'vscode is imported only under src/extension/: api, core, server and the webview run without it.' }],
};

export default tseslint.config(
  { ignores: ['dist/**', 'out/**', 'node_modules/**', '.test-output/**', 'media/**'] },
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    files: ['src/api/**', 'src/core/**', 'src/server/**'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          ...noVscode,
          patterns: [{ group: ['**/extension/**', '**/webview/**'], message: 'api/core/server never import the extension or webview.' }],
        },
      ],
    },
  },
  {
    // The extension shares only the process contract with the server: it runs the server as a child process.
    files: ['src/extension/**'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        { patterns: [{ regex: '/server/(?!contract$)', message: 'the extension imports from src/server only the process contract (src/server/contract.ts).' }] },
      ],
    },
  },
  {
    files: ['src/webview/**'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          ...noVscode,
          patterns: [{ group: ['**/server/**', '**/api/client*', 'node:*', 'undici'], message: 'the webview imports only src/core and shared protocol types.' }],
        },
      ],
    },
  },
);
