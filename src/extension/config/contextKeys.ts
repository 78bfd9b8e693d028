// Context keys (`when` clauses in package.json), all prefixed `testInbox.`.

export const ContextKey = {
  /** Connection state: idle | starting | ready | noToken | stopped | detached | unreachable | failed. */
  state: 'testInbox.state',
  /** `local` or `remote`. */
  serverKind: 'testInbox.serverKind',
  /** True when the connected server has no mail and the user added no inbox. */
  empty: 'testInbox.empty',
  /** True while connected to a Test Inbox server (the local one or a team server), not the hosted service: fault rules, the web UI. */
  testInboxServer: 'testInbox.testInboxServer',
} as const;
