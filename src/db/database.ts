/**
 * Opens the database: PGlite in `dataDir` (the embedded default) or PostgreSQL through a `pg` pool when
 * a URL is given. Both speak one SQL dialect; callers only see Kysely plus a few
 * helpers (ping for /readyz, a raw script runner for migrations, close).
 */
import fs from 'node:fs';
import path from 'node:path';
import type { PGlite } from '@electric-sql/pglite';
import { Kysely, PostgresDialect, sql, type PostgresPool, type Transaction } from 'kysely';
import pg from 'pg';
import type { DB } from './schema.ts';
import { pgliteDialect } from './pglite-dialect.ts';
import { clientClass, keepLeadingBom, openPipelinePool, PgliteStatements } from './driver-tricks.ts';
import { ForegroundGate } from './foreground-gate.ts';

export type Db = Kysely<DB>;

/** An open transaction of {@link Db} (what `db.transaction().execute` hands its callback). */
export type Tx = Transaction<DB>;

/** Runs one SQL text (possibly several statements, no parameters); resolves to the last statement's rows. */
export type ScriptRunner = (text: string) => Promise<Record<string, unknown>[]>;

export interface Database {
  readonly kind: 'pglite' | 'postgres';
  readonly db: Db;
  /** The embedded instance (PGlite only). */
  readonly pglite: PGlite | undefined;
  /**
   * How statements run on the embedded instance (PGlite only): Kysely's and, through `fromPglite`,
   * pg-boss's (db/driver-tricks.ts trick 5).
   */
  readonly pgliteStatements: PgliteStatements | undefined;
  /** The PostgreSQL URL (PostgreSQL only): pg-boss opens its own pool on it. */
  readonly url: string | undefined;
  /**
   * The requests' connection pool behind `db` (PostgreSQL only; background work has a pool of its
   * own, see openPostgres), for hot statements run as named prepared statements (parsed and planned
   * once per connection; Kysely sends every statement unnamed).
   */
  readonly pgPool: pg.Pool | undefined;
  /**
   * A small pool of PostgreSQL connections in node-postgres's pipeline mode, beside `pgPool`
   * (PostgreSQL with the driver tricks on only; see db/driver-tricks.ts trick 2): the accept
   * transaction's statements are sent without waiting for each answer (db/accept-store.ts).
   */
  readonly pipelinePool: pg.Pool | undefined;
  /** Whether the driver tricks of db/driver-tricks.ts are on (`DB_DRIVER_TRICKS`, default on). */
  readonly driverTricks: boolean;
  /** Runs a multi-statement SQL script inside one transaction, under a cluster-wide advisory lock. */
  runScriptLocked(lockKey: number, script: (run: ScriptRunner) => Promise<void>): Promise<void>;
  /**
   * Requests before background work (db/foreground-gate.ts): on the embedded database every
   * statement and transaction of background work waits there for its turn; on either database
   * background work asks it before a step's CPU work (`idle`), and the HTTP server tells it when a
   * request arrives and ends.
   */
  readonly gate: ForegroundGate;
  /** Runs `fn`, and everything it starts, as background work (the workers): `gate.runInBackground`. */
  runInBackground<T>(fn: () => T): T;
  /** Resolves when the database answers `SELECT 1`; rejects otherwise. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

const INT8 = 20;
const parseInt8 = (v: string) => Number(v);

/**
 * Only one process may open an embedded data directory. `cms.pid` names the process that has it; after
 * kill -9 the file stays behind naming a dead process and is simply taken over (PGlite itself recovers
 * from an unclean stop like PostgreSQL does, from its WAL). A file naming a live process is an error.
 */
function claimDataDir(dataDir: string): void {
  const pidFile = path.join(dataDir, 'cms.pid');
  let text = '';
  try {
    text = fs.readFileSync(pidFile, 'utf8');
  } catch {
    // no claim yet
  }
  const pid = Number.parseInt(text, 10);
  if (Number.isInteger(pid) && pid > 0 && pid !== process.pid) {
    let alive = true;
    try {
      process.kill(pid, 0);
    } catch (err) {
      alive = (err as NodeJS.ErrnoException).code === 'EPERM';
    }
    // A pid reused by an unrelated program after a restart is not a claim.
    if (alive) {
      try {
        alive = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('node');
      } catch {
        // no /proc: keep the conservative answer
      }
    }
    if (alive) throw new Error(`the data directory ${dataDir} is in use by process ${pid}`);
  }
  fs.writeFileSync(pidFile, `${process.pid}\n`);
}

/**
 * Opens PGlite in `dataDir` (created if missing; `memory://` for an in-memory database). `driverTricks`
 * (default true) turns on named prepared statements (db/driver-tricks.ts trick 5).
 */
export async function openPglite(dataDir: string, opts: { driverTricks?: boolean } = {}): Promise<Database> {
  const inMemory = dataDir.startsWith('memory://');
  if (!inMemory) {
    fs.mkdirSync(dataDir, { recursive: true });
    claimDataDir(dataDir);
  }
  // Imported here, not at the top: a process on PostgreSQL never loads PGlite (its modules stay out of memory).
  const pgliteModule = await import('@electric-sql/pglite');
  keepLeadingBom(pgliteModule);
  const pglite = await pgliteModule.PGlite.create(inMemory ? dataDir : path.join(dataDir, 'pglite'), {
    parsers: { [INT8]: parseInt8 },
  });
  const gate = new ForegroundGate();
  const statements = new PgliteStatements(pglite, pgliteModule, { tricks: opts.driverTricks ?? true, gate });
  const db = new Kysely<DB>({ dialect: pgliteDialect(pglite, statements) });
  return {
    kind: 'pglite',
    db,
    pglite,
    pgliteStatements: statements,
    url: undefined,
    pgPool: undefined,
    pipelinePool: undefined,
    driverTricks: opts.driverTricks ?? true,
    gate,
    runInBackground: (fn) => gate.runInBackground(fn),
    async runScriptLocked(_lockKey, script) {
      // One process owns a PGlite directory, and the transaction holds PGlite's exclusive lock.
      await pglite.transaction(async (tx) => {
        await script(async (text) => (await tx.exec(text)).at(-1)?.rows ?? []);
        // The script may have changed the schema that prepared statements were planned against.
        await statements.reset((text) => tx.exec(text));
      });
    },
    async ping() {
      await pglite.query('SELECT 1');
    },
    async close() {
      await db.destroy();
      await pglite.close();
      if (!inMemory) fs.rmSync(path.join(dataDir, 'cms.pid'), { force: true });
    },
  };
}

/** Statement time limits on PostgreSQL (ms; absent: none), see {@link openPostgres}. */
export interface StatementTimeouts {
  /** Every statement of a request (`DB_STATEMENT_TIMEOUT`). */
  statementTimeoutMs?: number;
  /** Every statement of background work: the workers (`DB_BACKGROUND_STATEMENT_TIMEOUT`). */
  backgroundStatementTimeoutMs?: number;
}

/**
 * Opens a pool of at most `poolMax` connections to the PostgreSQL database at `url`, plus, with the
 * driver tricks on (`driverTricks`, default true), the pipelined pool of db/driver-tricks.ts.
 *
 * Statement time limits (docs/operations.md "Statement time limits"): background work (the workers,
 * told apart by the gate's context, db/foreground-gate.ts `runInBackground`) takes its connections
 * from a pool of its own, at most `poolMax` too and opened only when background work runs (a
 * `--role api` process never opens one). Each pool's connections carry their limit from the start
 * (node-postgres's `statement_timeout`, sent as a startup parameter): `statementTimeoutMs` for the
 * requests' pool and the pipelined one, `backgroundStatementTimeoutMs` for the background pool.
 * Kysely's `db` picks the pool by the context of the statement (or transaction) that asks for a
 * connection, so no caller changes; a `SET LOCAL` per background transaction would have missed the
 * statements the workers run outside transactions. A statement over its limit fails with SQLSTATE
 * 57014 (`canceling statement due to statement timeout`; answered 503, http/errors.ts
 * `isStatementTimeout`). Migrations ({@link Database.runScriptLocked}) run without a limit.
 */
export async function openPostgres(url: string, poolMax: number, opts: { driverTricks?: boolean } & StatementTimeouts = {}): Promise<Database> {
  const tricks = opts.driverTricks ?? true;
  const options: pg.PoolConfig = {
    Client: clientClass(tricks), // with the tricks: texts marked PREPARED run as named statements (db/prepared.ts)
    connectionString: url,
    max: poolMax,
    connectionTimeoutMillis: 5_000,
    idleTimeoutMillis: 30_000,
    types: { getTypeParser: ((oid: number, format?: string) => (oid === INT8 ? parseInt8 : pg.types.getTypeParser(oid, format as 'text'))) as typeof pg.types.getTypeParser },
  };
  const requestOptions: pg.PoolConfig = { ...options, ...(opts.statementTimeoutMs ? { statement_timeout: opts.statementTimeoutMs } : {}) };
  const pool = guarded(new pg.Pool(requestOptions));
  const background = guarded(new pg.Pool({ ...options, ...(opts.backgroundStatementTimeoutMs ? { statement_timeout: opts.backgroundStatementTimeoutMs } : {}) }));
  const pipelined = openPipelinePool(tricks, requestOptions, Math.min(4, poolMax));
  if (pipelined) guarded(pipelined);
  const gate = new ForegroundGate();
  const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool: byContext(gate, pool, background) }) });
  return {
    kind: 'postgres',
    db,
    pglite: undefined,
    pgliteStatements: undefined,
    url,
    pgPool: pool,
    pipelinePool: pipelined,
    driverTricks: tricks,
    gate,
    runInBackground: (fn) => gate.runInBackground(fn),
    async runScriptLocked(lockKey, script) {
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        // A migration (and the wait for another process's) may take longer than a request's limit.
        await client.query('SET LOCAL statement_timeout = 0');
        await client.query('SELECT pg_advisory_xact_lock($1)', [lockKey]);
        await script(async (text) => {
          const result = (await client.query(text)) as pg.QueryResult | pg.QueryResult[];
          return (Array.isArray(result) ? result.at(-1)?.rows : result.rows) ?? [];
        });
        await client.query('COMMIT');
      } catch (err) {
        await client.query('ROLLBACK').catch(() => {});
        throw err;
      } finally {
        client.release();
      }
    },
    async ping() {
      await sql`SELECT 1`.execute(db);
    },
    async close() {
      await db.destroy();
      await pipelined?.end();
    },
  };
}

/**
 * The pool Kysely's dialect sees: a connection from `background` for background work (the gate's
 * context), from `requests` otherwise; `options` and `Client` (Kysely's control connection, which
 * cancels an aborted query) are those of the pool of the caller's context. Ending it ends both.
 */
function byContext(gate: ForegroundGate, requests: pg.Pool, background: pg.Pool): PostgresPool {
  const current = () => (gate.background ? background : requests);
  return {
    get Client() { return (current() as unknown as { Client: PostgresPool['Client'] }).Client; },
    get options() { return current().options; },
    connect: () => current().connect(),
    async end() {
      await Promise.all([requests.end(), background.end()]);
    },
  };
}

/**
 * An idle client that loses its connection (database restart) emits 'error' on the pool; without a
 * listener that would crash the process, and the pool replaces the client on the next checkout. A
 * connection in use that breaks also emits 'error' on its client: the query in flight fails and is
 * answered 503, but the process must not die.
 */
function guarded(pool: pg.Pool): pg.Pool {
  pool.on('error', () => {});
  pool.on('connect', (client) => { client.on('error', () => {}); });
  return pool;
}
