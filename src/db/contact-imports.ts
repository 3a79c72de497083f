/**
 * The statements on `contact_imports` of src/domain/contact-imports.ts (which checks the file and
 * decides what an import answers), one per function.
 */
import { sql } from 'kysely';
import type { Db } from './database.ts';
import type { ContactImport } from '../domain/contact-imports.ts';

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
