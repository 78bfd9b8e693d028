// Limits that both a test and the bench check, written once.

/** The VSIX carries the extension and the whole server (web UI, MCP, provider APIs): at most this size (issue 30's cap). */
export const VSIX_LIMIT_KB = 800;
