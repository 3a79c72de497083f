/**
 * A Kysely dialect for an embedded PGlite database that is safe under concurrency.
 *
 * PGlite has one connection. The published Kysely dialects for it send BEGIN/COMMIT as plain queries on
 * that shared connection, so two concurrent Kysely transactions (or a transaction and pg-boss's own
 * queries) interleave inside one database transaction. Here a Kysely transaction is run inside
 * `pglite.transaction()`, which holds PGlite's exclusive lock until commit or rollback: every other
 * query, Kysely's or pg-boss's, waits for it. Plain queries take the same lock per statement. Statements
 * run through {@link PgliteStatements} (db/driver-tricks.ts trick 5: named prepared statements, or
 * `pglite.query` / `tx.query` with the tricks off). Kysely's PostgreSQL adapter and compiler are used
 * unchanged. The statements' gate (db/foreground-gate.ts), when there is one, orders transactions too.
 */
import type { PGlite, Transaction as PGliteTx } from '@electric-sql/pglite';
import type { PgliteStatements } from './driver-tricks.ts';
import {
  CompiledQuery,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  type Kysely,
  type QueryResult,
  type TransactionSettings,
} from 'kysely';

/** Command tags whose statements report the rows they changed. */
const DML_COMMANDS: ReadonlySet<string> = new Set(['INSERT', 'UPDATE', 'DELETE', 'MERGE']);

class PGliteConnection implements DatabaseConnection {
  readonly pglite: PGlite;
  readonly statements: PgliteStatements;
  tx: PGliteTx | undefined;
  finish: ((rollback: boolean) => Promise<void>) | undefined;

  constructor(pglite: PGlite, statements: PgliteStatements) {
    this.pglite = pglite;
    this.statements = statements;
  }

  async executeQuery<R>(compiled: CompiledQuery): Promise<QueryResult<R>> {
    const result = this.tx
      ? await this.statements.inTransaction<R>(this.tx, compiled.sql, compiled.parameters)
      : await this.statements.query<R>(compiled.sql, compiled.parameters);
    // As Kysely's PostgreSQL driver does: the rows a statement changed, judged by its command tag
    // (so raw `sql` statements report them too, as node-postgres's rowCount does on PostgreSQL).
    const affected = result.affectedRows;
    const counts = DML_COMMANDS.has((result as { command?: string }).command ?? '');
    return {
      rows: result.rows,
      ...(counts && affected !== undefined ? { numAffectedRows: BigInt(affected) } : {}),
    };
  }

  // eslint-disable-next-line require-yield
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('PGlite does not support streaming queries');
  }

  /**
   * Opens a PGlite transaction and keeps its lock until `finish` is called; with a gate
   * (db/foreground-gate.ts) the whole transaction is one turn there.
   */
  async begin(): Promise<void> {
    const leave = this.statements.gate ? await this.statements.gate.enter() : () => {};
    try {
      await this.#begin(leave);
    } catch (err) {
      leave();
      throw err;
    }
  }

  async #begin(leave: () => void): Promise<void> {
    let opened!: (tx: PGliteTx) => void;
    let failed!: (err: unknown) => void;
    const ready = new Promise<PGliteTx>((resolve, reject) => { opened = resolve; failed = reject; });
    let done!: (rollback: boolean) => void;
    const finished = new Promise<boolean>((resolve) => { done = resolve; });
    const outcome = this.pglite.transaction(async (tx) => {
      opened(tx);
      if (await finished) await tx.rollback();
    });
    outcome.catch(failed);
    this.tx = await ready;
    this.finish = async (rollback: boolean) => {
      done(rollback);
      try {
        await outcome;
      } finally {
        this.tx = undefined;
        this.finish = undefined;
        leave();
      }
    };
  }
}

class PGliteDriver implements Driver {
  readonly pglite: PGlite;
  readonly statements: PgliteStatements;
  constructor(pglite: PGlite, statements: PgliteStatements) {
    this.pglite = pglite;
    this.statements = statements;
  }
  async init(): Promise<void> {}
  async acquireConnection(): Promise<DatabaseConnection> {
    return new PGliteConnection(this.pglite, this.statements);
  }
  async beginTransaction(connection: DatabaseConnection, _settings: TransactionSettings): Promise<void> {
    await (connection as PGliteConnection).begin();
  }
  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    await (connection as PGliteConnection).finish?.(false);
  }
  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    await (connection as PGliteConnection).finish?.(true);
  }
  async releaseConnection(): Promise<void> {}
  async destroy(): Promise<void> {}
}

/**
 * Kysely dialect over an open PGlite instance whose statements run through `statements`; the caller
 * owns (and closes) the instance.
 */
export function pgliteDialect(pglite: PGlite, statements: PgliteStatements): Dialect {
  return {
    createAdapter: () => new PostgresAdapter(),
    createDriver: () => new PGliteDriver(pglite, statements),
    createIntrospector: (db: Kysely<any>) => new PostgresIntrospector(db),
    createQueryCompiler: () => new PostgresQueryCompiler(),
  };
}
