/**
 * The statements on `contact_imports` of src/domain/contact-imports.ts (which checks the file, runs the job and
 * decides what an import answers), one per function.
 */
import { sql } from 'kysely';
import type { Db } from './database.ts';
import type { ContactImport, ImportRowError } from '../domain/contact-imports.ts';

/** A new import's values: the file's bytes, its delimiter and row count; `created_at` from the service clock. */
export interface NewImport { companyId: number; actor: string; filename: string | null; delimiter: string; csv: Buffer; total: number; createdAt: Date }

/** Inserts an import (status queued); its id. */
export async function insertImport(db: Db, v: NewImport): Promise<number> {
  const { rows } = await sql<{ import_id: string }>`
    INSERT INTO contact_imports (company_id, actor, filename, delimiter, csv, total, created_at)
    VALUES (${v.companyId}, ${v.actor}, ${v.filename}, ${v.delimiter}, ${v.csv}, ${v.total}, ${v.createdAt.toISOString()}::timestamptz)
    RETURNING import_id`.execute(db);
  return Number(rows[0].import_id);
}

/** Company `companyId`'s import `importId` without the file (`import_id` as the driver gives it), or undefined. */
export async function selectImport(db: Db, companyId: number, importId: number): Promise<ContactImport | undefined> {
  const { rows } = await sql<ContactImport>`
    SELECT import_id, company_id, filename, delimiter, status, total, processed, created, updated, failed, errors, error, created_at, finished_at
    FROM contact_imports WHERE import_id = ${importId} AND company_id = ${companyId}`.execute(db);
  return rows[0];
}

/** The company's newest imports (without their files), at most `limit`. */
export async function selectRecentImports(db: Db, companyId: number, limit: number): Promise<ContactImport[]> {
  const { rows } = await sql<ContactImport>`
    SELECT import_id, company_id, filename, delimiter, status, total, processed, created, updated, failed, errors, error, created_at, finished_at
    FROM contact_imports WHERE company_id = ${companyId} ORDER BY import_id DESC LIMIT ${limit}`.execute(db);
  return rows;
}

/** What the import job reads of its import: who started it, the file and its progress, and the company's default country. */
export interface ImportJobRow {
  actor: string; delimiter: string; csv: Uint8Array | null; status: string; processed: number;
  total: number; failed: number; errors: ImportRowError[]; default_country: string;
}

/** Import `importId` of company `companyId` as its job reads it, or undefined. */
export async function selectImportForJob(db: Db, companyId: number, importId: number): Promise<ImportJobRow | undefined> {
  const { rows } = await sql<ImportJobRow>`
    SELECT i.actor, i.delimiter, i.csv, i.status, i.processed, i.total, i.failed, i.errors, c.default_country
    FROM contact_imports i JOIN companies c ON c.company_id = i.company_id
    WHERE i.import_id = ${importId} AND i.company_id = ${companyId}`.execute(db);
  return rows[0];
}

/** Import `importId` becomes `running` when it is `queued`. */
export async function markImportRunning(db: Db, importId: number): Promise<void> {
  await sql`UPDATE contact_imports SET status = 'running' WHERE import_id = ${importId} AND status = 'queued'`.execute(db);
}

/** Adds one chunk's counts to import `importId`'s progress and stores its kept row errors (`errors`, the whole list). */
export async function addImportProgress(
  db: Db, importId: number, p: { processed: number; created: number; updated: number; failed: number; errors: ImportRowError[] },
): Promise<void> {
  await sql`
    UPDATE contact_imports SET processed = processed + ${p.processed}, created = created + ${p.created},
      updated = updated + ${p.updated}, failed = failed + ${p.failed}, errors = ${JSON.stringify(p.errors)}::jsonb
    WHERE import_id = ${importId}`.execute(db);
}

/** The counts of a finished import. */
export interface ImportCounts { processed: number; created: number; updated: number; failed: number; total: number }

/**
 * Import `importId` becomes `completed` (its file cleared, `finished_at` = `at`, an ISO time) unless it
 * is already; its counts, or undefined when it was completed already.
 */
export async function completeImportRow(db: Db, importId: number, at: string): Promise<ImportCounts | undefined> {
  const { rows } = await sql<ImportCounts>`
    UPDATE contact_imports SET status = 'completed', csv = NULL, finished_at = ${at}::timestamptz
    WHERE import_id = ${importId} AND status <> 'completed'
    RETURNING processed, created, updated, failed, total`.execute(db);
  return rows[0];
}
