import type Database from 'better-sqlite3';

/**
 * Prepared statements by their SQL text, prepared once per connection: the scheduler, the workers and the API
 * run the same few statements many times.
 */
export class Statements {
  private readonly cache = new Map<string, Database.Statement>();

  constructor(private readonly db: Database.Database) {}

  get(text: string): Database.Statement {
    let stmt = this.cache.get(text);
    if (!stmt) {
      stmt = this.db.prepare(text);
      this.cache.set(text, stmt);
    }
    return stmt;
  }
}
