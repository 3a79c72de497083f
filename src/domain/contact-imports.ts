/**
 * CSV imports of contacts that run as a durable background job: the console's upload
 * and `POST /admin/companies/{id}/contacts/imports`. The file is checked when it arrives (size, UTF-8,
 * delimiter, header, CSV syntax; its data rows counted); a file that fails answers a clear error and
 * writes nothing. A good one is stored in a `contact_imports` row (migration 012) together with its
 * `contacts-import` job, in one transaction; the job (queue/handlers/contacts-import.ts) writes the
 * contacts IMPORT_CHUNK rows at a time and commits its progress (processed / created / updated / failed,
 * and the first MAX_STORED_ERRORS invalid rows with their line numbers) with each chunk.
 * Format: contacts-csv.ts (the CLI's). Opt-out states it sets are recorded with source `import`.
 */
import { isUtf8 } from 'node:buffer';
import { CsvError, parse, type Info } from 'csv-parse';
import { insertImport, selectImport } from '../db/contact-imports.ts';
import type { Db } from '../db/database.ts';
import type { JobQueue } from './job-queue.ts';
import { csvParseOptions, CsvFormatError, detectDelimiter, normalizeHeader, recordToContact, type CsvContact } from './contacts-csv.ts';
import { DomainError } from './errors.ts';
import { recordAudit } from './audit.ts';

/** Largest CSV file an import takes: 20 MiB (about 200,000 contacts with a few variables). */
export const MAX_IMPORT_BYTES = 20 * 1024 * 1024;
/** Rows written per transaction by the job. */
export const IMPORT_CHUNK = 1000;
/** Invalid rows kept with their line numbers (the count goes on past it). */
export const MAX_STORED_ERRORS = 100;

/** One invalid row. */
export interface ImportRowError { line: number; error: string }

/** An import as its progress page and the operator API show it. */
export interface ContactImport {
  import_id: number;
  company_id: number;
  filename: string | null;
  delimiter: string;
  status: 'queued' | 'running' | 'completed' | 'failed';
  total: number;
  processed: number;
  created: number;
  updated: number;
  failed: number;
  errors: ImportRowError[];
  error: string | null;
  created_at: Date;
  finished_at: Date | null;
}

/** One parsed data row: its line, and the contact or why it cannot be one. */
export type ParsedRow = { line: number; contact: CsvContact } | { line: number; error: string };

/**
 * The data rows of a contacts CSV, in order, each a contact or a row error (wrong number of fields,
 * bad opted_out or tags, no phone, a name or variable value that breaks contact-rules.ts). Throws
 * CsvFormatError for a bad header (a variable column whose name is no variable name included) and for
 * CSV syntax errors (these concern the file, not a row).
 */
export async function* parseContactRows(bytes: Buffer, delimiter: string): AsyncGenerator<ParsedRow> {
  const parser = parse(bytes, { ...csvParseOptions(delimiter), columns: false, relax_column_count: true });
  let header: string[] | undefined;
  try {
    for await (const item of parser as AsyncIterable<{ record: string[]; info: Info }>) {
      const line = item.info.lines;
      if (!header) {
        header = normalizeHeader(item.record);
        continue;
      }
      if (item.record.length !== header.length) {
        yield { line, error: `has ${item.record.length} fields, the header has ${header.length}` };
        continue;
      }
      const record: Record<string, string> = {};
      header.forEach((h, i) => { record[h] = item.record[i]; });
      try {
        const contact = recordToContact(record, line);
        yield contact ? { line, contact } : { line, error: 'no phone number' };
      } catch (err) {
        if (err instanceof CsvFormatError) yield { line, error: err.message.replace(/^line \d+: /, '') };
        else throw err;
      }
    }
  } catch (err) {
    if (err instanceof CsvFormatError) throw err;
    // Every csv-parse error is a CsvError (codes like CSV_QUOTE_NOT_CLOSED but also INVALID_OPENING_QUOTE).
    if (err instanceof CsvError) throw new CsvFormatError(`invalid CSV: ${err.message}`);
    throw err;
  }
  if (!header) throw new CsvFormatError('the file is empty: a header row with a "phone" column is needed');
}

/**
 * Checks an uploaded file and counts its data rows. 400 DomainError (the message says what to fix)
 * when it is empty, larger than MAX_IMPORT_BYTES, not UTF-8, has no `phone` column with any of the
 * delimiters, a header column that is neither a known column nor a variable name (named in the
 * message), or is no valid CSV.
 */
export async function checkImportFile(bytes: Buffer): Promise<{ delimiter: string; total: number }> {
  if (bytes.length === 0) throw new DomainError(400, 'The file is empty.');
  if (bytes.length > MAX_IMPORT_BYTES) throw new DomainError(400, `The file is larger than ${MAX_IMPORT_BYTES / 1024 / 1024} MiB.`);
  // isUtf8 checks in place: no decoded copy of a 20 MiB file is made.
  if (!isUtf8(bytes)) throw new DomainError(400, 'The file is not UTF-8 text. Save it as "CSV UTF-8" and upload it again.');
  const delimiter = detectDelimiter(bytes.subarray(0, 64 * 1024).toString('utf8'));
  let total = 0;
  try {
    for await (const _row of parseContactRows(bytes, delimiter)) total++;
  } catch (err) {
    if (err instanceof CsvFormatError) {
      const hint = /no "phone" column/.test(err.message) ? ' The columns are separated by commas, semicolons, tabs or |.' : '';
      throw new DomainError(400, `${err.message[0].toUpperCase()}${err.message.slice(1)}.${hint}`);
    }
    throw err;
  }
  if (total === 0) throw new DomainError(400, 'The file has no contact rows under its header.');
  return { delimiter, total };
}

/**
 * Checks the file (checkImportFile) and, in one transaction, stores it as an import of the company and
 * enqueues its `contacts-import` job through `jobs` (`created_at` = `now`, the service clock), audit-logged as
 * `contacts.import_start` (counts, no data). Returns the new import.
 */
export async function createImport(
  db: Db, jobs: JobQueue, companyId: number, file: { bytes: Buffer; filename: string | null }, actor: string, now: Date,
): Promise<ContactImport> {
  const { delimiter, total } = await checkImportFile(file.bytes);
  const importId = await db.transaction().execute(async (trx) => {
    const id = await insertImport(trx, {
      companyId, actor, filename: file.filename?.slice(0, 255) ?? null, delimiter, csv: file.bytes, total, createdAt: now,
    });
    await jobs.enqueue(trx, 'contacts-import', { import_id: id, company_id: companyId });
    await recordAudit(trx, { actor, action: 'contacts.import_start', target: `import:${id}`, company_id: companyId, details: { total, bytes: file.bytes.length } });
    return id;
  });
  return getImport(db, companyId, importId);
}

/** The company's import `importId` (never the file itself); 404 `Import not found` otherwise. */
export async function getImport(db: Db, companyId: number, importId: number): Promise<ContactImport> {
  if (!Number.isSafeInteger(importId) || importId < 1) throw new DomainError(404, 'Import not found');
  const row = await selectImport(db, companyId, importId);
  if (!row) throw new DomainError(404, 'Import not found');
  return { ...row, import_id: Number(row.import_id) };
}
