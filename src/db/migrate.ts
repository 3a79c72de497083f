/**
 * Forward-only numbered SQL migrations (`migrations/NNN_name.sql`), applied on start in order, each
 * once, in one transaction under an advisory lock so that several processes starting together apply
 * them once. Applied versions are recorded in `schema_migrations`.
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
