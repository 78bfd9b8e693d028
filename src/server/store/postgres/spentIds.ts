// The web UI's spent ids on a team server (src/server/http/ui/session.ts Revocations): signed-out
// sessions and used sign-in tickets, in PostgreSQL (migration 6), so that a sign-out on one
// process ends the session on every process, and a ticket spent on one is refused by all.
// A row lives until its id's own expiry; the next spend removes the expired rows.
import type { Query } from './queries';

export class PostgresSpentIds {
  constructor(private readonly query: Query) {}

  /** Records the id until `expires` (ms, the server's clock, as `now`); false when another process, or this one, recorded it first. */
  async revoke(id: string, expires: number, now: number): Promise<boolean> {
    const rows = await this.query<{ id: string }>('INSERT INTO test_inbox_ui_spent (id, expires_ms) VALUES ($1, $2) ON CONFLICT (id) DO NOTHING RETURNING id', [id, expires]);
    await this.query('DELETE FROM test_inbox_ui_spent WHERE expires_ms < $1', [now]);
    return rows.length === 1;
  }

  async isRevoked(id: string): Promise<boolean> {
    return (await this.query('SELECT 1 FROM test_inbox_ui_spent WHERE id = $1', [id])).length > 0;
  }
}
