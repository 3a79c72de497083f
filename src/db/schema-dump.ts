/**
 * The database schema as migrated, as one readable text (`src/db/schema.sql`, written by
 * `npm run db:dump`; docs/architecture.md "Where SQL lives"): every table of the `public` schema with
 * its columns, constraints and indexes, then every function and trigger, each in its current
 * definition (a function redefined by several migrations appears once, as it is now). Read from the
 * catalog with one statement per part, ordered by name, so the text depends only on the schema.
 * pg-boss's own schema (`pgboss`) is not included. PostgreSQL's deparsing differs slightly between
 * major versions: the checked-in text is the embedded database's (PGlite).
 */
import { sql } from 'kysely';
import type { Db } from './database.ts';

interface Column { table_name: string; column_name: string; type: string; not_null: boolean; default_expr: string | null }

/** The columns of every table of `public` (migrations' bookkeeping table included), in table and column order. */
async function columns(db: Db): Promise<Column[]> {
  const { rows } = await sql<Column>`
    SELECT c.relname AS table_name, a.attname AS column_name, format_type(a.atttypid, a.atttypmod) AS type,
           a.attnotnull AS not_null, pg_get_expr(d.adbin, d.adrelid) AS default_expr
    FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
    JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
    LEFT JOIN pg_attrdef d ON d.adrelid = c.oid AND d.adnum = a.attnum
    WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p')
    ORDER BY c.relname, a.attnum`.execute(db);
  return rows;
}

/** Every constraint of a `public` table, as `ALTER TABLE ... ADD CONSTRAINT` lines, by table and name. */
async function constraints(db: Db): Promise<string[]> {
  const { rows } = await sql<{ line: string }>`
    SELECT format('ALTER TABLE %I ADD CONSTRAINT %I %s;', c.relname, k.conname, pg_get_constraintdef(k.oid)) AS line
    FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE n.nspname = 'public'
    ORDER BY c.relname, k.conname`.execute(db);
  return rows.map((r) => r.line);
}

/** Every index of `public` that no constraint owns, by table and name. */
async function indexes(db: Db): Promise<string[]> {
  const { rows } = await sql<{ line: string }>`
    SELECT i.indexdef || ';' AS line FROM pg_indexes i
    WHERE i.schemaname = 'public'
      AND NOT EXISTS (SELECT 1 FROM pg_constraint k WHERE k.conname = i.indexname AND k.connamespace = 'public'::regnamespace)
    ORDER BY i.tablename, i.indexname`.execute(db);
  return rows.map((r) => r.line);
}

/** Every function of `public` in its current definition, by name and arguments. */
async function functions(db: Db): Promise<string[]> {
  const { rows } = await sql<{ def: string }>`
    SELECT pg_get_functiondef(p.oid) AS def FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
    WHERE n.nspname = 'public' AND p.prokind IN ('f', 'p')
    ORDER BY p.proname, pg_get_function_identity_arguments(p.oid)`.execute(db);
  return rows.map((r) => `${r.def.trimEnd()};`);
}

/** Every trigger on a `public` table (not the internal ones of constraints), by table and name. */
async function triggers(db: Db): Promise<string[]> {
  const { rows } = await sql<{ line: string }>`
    SELECT pg_get_triggerdef(t.oid) || ';' AS line
    FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE n.nspname = 'public' AND NOT t.tgisinternal
    ORDER BY c.relname, t.tgname`.execute(db);
  return rows.map((r) => r.line);
}

/** The schema of `db` as the text of `src/db/schema.sql` (see the module comment). */
export async function dumpSchema(db: Db): Promise<string> {
  const out: string[] = ['-- The schema as migrated (src/db/migrations), written by `npm run db:dump`; a test fails when it', '-- differs from a freshly migrated database. Read it; change the schema with a new migration.', ''];
  const byTable = new Map<string, Column[]>();
  for (const c of await columns(db)) byTable.set(c.table_name, [...(byTable.get(c.table_name) ?? []), c]);
  for (const [table, cols] of byTable) {
    const lines = cols.map((c) => `  ${c.column_name} ${c.type}${c.not_null ? ' NOT NULL' : ''}${c.default_expr === null ? '' : ` DEFAULT ${c.default_expr}`}`);
    out.push(`CREATE TABLE ${table} (`, lines.join(',\n'), ');', '');
  }
  out.push('-- Constraints', ...(await constraints(db)), '', '-- Indexes', ...(await indexes(db)), '', '-- Functions');
  for (const f of await functions(db)) out.push(f, '');
  out.push('-- Triggers', ...(await triggers(db)), '');
  return out.join('\n');
}
