/**
 * Forward-only numbered SQL migrations (`migrations/NNN_name.sql`), applied on start in order, each
 * once, in one transaction under an advisory lock so that several processes starting together apply
 * them once. Applied versions are recorded in `schema_migrations` (version, name, applied_at).
 *
 * Why not Kysely's `Migrator` (with a provider reading these files): weighed and not taken, because
 * on this service it would add more than it removes.
 * - History: `Migrator` keeps its own tables (`kysely_migration` with `name`/`timestamp` text columns,
 *   and `kysely_migration_lock`); it cannot read `schema_migrations`. Every existing data directory and
 *   database would need a one-time copy of its history into the new table (under a lock of our own,
 *   since Migrator creates its tables before taking its lock), and the old table would stay beside it
 *   (or be dropped by a migration): two more tables in the schema dump, and a conversion to keep forever.
 * - Scripts: each file holds many statements (functions, DO blocks). `Migrator` runs a migration
 *   through the dialect's driver; on PGlite that driver runs every statement as a named prepared
 *   statement (db/driver-tricks.ts trick 5) or through `query` (the extended protocol), and neither
 *   accepts several statements: the dialect would need a bypass to `exec` for scripts. Here
 *   `Database.runScriptLocked` already runs a script the right way on each database (PGlite's `exec`
 *   in its transaction, a simple query on PostgreSQL under `pg_advisory_xact_lock`).
 * - Afterwards PGlite's prepared statements must be dropped (the schema changed under their plans),
 *   which `runScriptLocked` does inside the same transaction; around `Migrator` it would be a step of its own.
 * What would remain of this file is the listing of the files below, which `Migrator` does not give.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Database } from './database.ts';

const MIGRATIONS_DIR = path.join(import.meta.dirname, 'migrations');
const LOCK_KEY = 727_001;

export interface Migration { version: number; name: string; sql: string }

/** Lists the migration files, sorted by version. Throws on a misnamed file or a duplicate version. */
export function listMigrations(dir = MIGRATIONS_DIR): Migration[] {
  const seen = new Set<number>();
  return fs.readdirSync(dir)
    .filter((f) => f.endsWith('.sql'))
    .map((file) => {
      const match = /^(\d+)_([a-z0-9_]+)\.sql$/.exec(file);
      if (!match) throw new Error(`migration file name must be NNN_name.sql: ${file}`);
      const version = Number(match[1]);
      if (seen.has(version)) throw new Error(`duplicate migration version ${version}`);
      seen.add(version);
      return { version, name: match[2], sql: fs.readFileSync(path.join(dir, file), 'utf8') };
    })
    .sort((a, b) => a.version - b.version);
}

/** Applies every migration not yet applied; returns the versions it applied. */
export async function migrate(database: Database): Promise<number[]> {
  const migrations = listMigrations();
  const applied: number[] = [];
  await database.runScriptLocked(LOCK_KEY, async (run) => {
    await run(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`);
    const done = new Set((await run('SELECT version FROM schema_migrations')).map((r) => Number(r.version)));
    for (const m of migrations) {
      if (done.has(m.version)) continue;
      await run(m.sql);
      await run(`INSERT INTO schema_migrations (version, name) VALUES (${m.version}, '${m.name}')`);
      applied.push(m.version);
    }
  });
  return applied;
}
