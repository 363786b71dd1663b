import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';

/**
 * One SQLite file in WAL mode and what every part of the store does with it: prepared statements and
 * transactions. better-sqlite3 is synchronous; the parts keep the async interface so a networked store can
 * stand in. Write transactions are IMMEDIATE so that two processes on one file serialize instead of
 * failing on lock upgrades.
 */
export class SqliteDb {
  readonly connection: Database.Database;
  /**
   * Prepared statements by their SQL text, prepared once per connection: the scheduler, the workers and the
   * API run the same few statements many times. Plucking statements are kept apart: pluck() switches a
   * statement for every later use, and one text may be read both ways (the notifier plucks its cursor from
   * scheduler_state, where getState reads whole rows).
   */
  private readonly statements = new Map<string, Database.Statement>();
  private readonly plucking = new Map<string, Database.Statement>();

  constructor(file: string) {
    mkdirSync(dirname(file), { recursive: true });
    this.connection = new Database(file);
    this.connection.pragma('journal_mode = WAL');
    this.connection.pragma('synchronous = NORMAL');
    // A checkpoint (on the commit that finds the log past this many pages) copies each page the log holds
    // once, however often it was written since the last, then syncs the log and the file. An approval writes
    // some sixty pages over its transactions, many of them the same few (counters, the tails of tables and
    // indexes): at 4,000 pages (16 MB) rather than SQLite's 1,000, checkpoints come a quarter as often, copy
    // those hot pages once per 4,000 pages of log, and the daemon spent about a tenth less CPU per approval.
    this.connection.pragma('wal_autocheckpoint = 4000');
    this.connection.pragma('busy_timeout = 5000');
    this.connection.pragma('foreign_keys = ON');
  }

  sql(text: string): Database.Statement {
    return this.prepared(this.statements, text, false);
  }

  /** A statement that returns each row's first column only (better-sqlite3's pluck mode). */
  pluck(text: string): Database.Statement {
    return this.prepared(this.plucking, text, true);
  }

  private prepared(cache: Map<string, Database.Statement>, text: string, pluck: boolean): Database.Statement {
    let stmt = cache.get(text);
    if (!stmt) {
      stmt = this.connection.prepare(text);
      if (pluck) stmt.pluck();
      cache.set(text, stmt);
    }
    return stmt;
  }

  /** Runs `fn` in one IMMEDIATE transaction: it holds the write lock from its first statement. */
  write<T>(fn: () => T): T {
    return this.connection.transaction(fn).immediate();
  }

  /** Runs `fn` in one read transaction: everything it reads comes from the same snapshot. */
  read<T>(fn: () => T): T {
    return this.connection.transaction(fn)();
  }

  close(): void {
    if (this.connection.open) this.connection.close();
  }
}
