/**
 * CSV imports of contacts that run as a durable background job: the console's upload
 * and `POST /admin/companies/{id}/contact-imports`. The file is checked when it arrives (size, UTF-8,
 * delimiter, header, CSV syntax; its data rows counted); a file that fails answers a clear error and
 * writes nothing. A good one is stored in a `contact_imports` row (migration 012) together with its
 * `contacts-import` job, in one transaction; the job (queue/handlers/contacts-import.ts) writes the
 * contacts IMPORT_CHUNK rows at a time (runContactImport) and commits its progress (processed / created / updated / failed,
 * and the first MAX_STORED_ERRORS invalid rows with their line numbers) with each chunk.
 * Format: contacts-csv.ts (the CLI's). Opt-out states it sets are recorded with source `import`.
 */
import { isUtf8 } from 'node:buffer';
import { CsvError, parse, type Info } from 'csv-parse';
import {
  addImportProgress, completeImportRow, insertImport, markImportRunning, selectImport, selectImportForJob, selectRecentImports,
} from '../db/contact-imports.ts';
import type { Db } from '../db/database.ts';
import { actorName, audit, type Actor } from './actor.ts';
import { recordAudit } from './audit.ts';
import type { JobQueue } from './job-queue.ts';
import { upsertContacts, type ContactWrite } from './contacts.ts';
import { csvParseOptions, CsvFormatError, detectDelimiter, normalizeHeader, recordToContact, type CsvContact } from './contacts-csv.ts';
import { DomainError } from './errors.ts';
import { toE164 } from './phone.ts';

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
 * Command: checks the file (checkImportFile) and, in one transaction, stores it as an import of the
 * company started by `actor` (its audit name is kept with the import: the job's audit entry names it)
 * and enqueues its `contacts-import` job through `jobs` (`created_at` = `now`, the service clock),
 * audit-logged as `contacts.import_start` on `import:<id>` (counts, no data). Returns the new import.
 * 400 DomainError for a file that cannot be imported (nothing written).
 */
export async function createImport(
  db: Db, jobs: JobQueue, actor: Actor, companyId: number, file: { bytes: Buffer; filename: string | null }, now: Date,
): Promise<ContactImport> {
  const { delimiter, total } = await checkImportFile(file.bytes);
  const importId = await db.transaction().execute(async (trx) => {
    const id = await insertImport(trx, {
      companyId, actor: actorName(actor), filename: file.filename?.slice(0, 255) ?? null, delimiter, csv: file.bytes, total, createdAt: now,
    });
    await jobs.enqueue(trx, 'contacts-import', { import_id: id, company_id: companyId });
    await audit(trx, actor, { action: 'contacts.import_start', target: `import:${id}`, companyId, details: { total, bytes: file.bytes.length } });
    return id;
  });
  return getImport(db, companyId, importId);
}

/** Imports the console's import page lists. */
export const RECENT_IMPORTS = 10;

/** The company's RECENT_IMPORTS newest imports (without their files), newest first. */
export async function recentImports(db: Db, companyId: number): Promise<ContactImport[]> {
  return selectRecentImports(db, companyId, RECENT_IMPORTS);
}

/** Payload of the `contacts-import` job. */
export interface ContactsImportJob { import_id: number; company_id: number }

/**
 * Runs (or resumes) the `contacts-import` job of one import: reads the stored CSV, normalises each
 * row's phone to E.164 (the company's default country) and writes the contacts IMPORT_CHUNK rows at a
 * time, each chunk in one transaction with the import's progress (processed, created, updated, failed,
 * the first MAX_STORED_ERRORS invalid rows with their line numbers). Opt-out states are recorded with
 * source `import` and evidence `{import_id, line, actor}` (the consent ledger). Idempotent and
 * resumable: a run skips the rows already processed, and a completed or failed import is left as it
 * is (false: nothing was run). At the end the stored file is cleared, the import is `completed`
 * (`finished_at` = `now()`, the service clock) and one audit entry `contacts.import` on
 * `import:<id>` (counts only) is written for the actor who started it (the audit name stored with
 * the import). True when the import ran to its end.
 */
export async function runContactImport(db: Db, job: ContactsImportJob, now: () => Date): Promise<boolean> {
  const imp = await selectImportForJob(db, job.company_id, job.import_id);
  if (!imp || imp.status === 'completed' || imp.status === 'failed' || !imp.csv) return false;
  await markImportRunning(db, job.import_id);

  let seen = 0;
  const errors = imp.errors;
  let chunk: { line: number; write?: ContactWrite; error?: string }[] = [];
  const flush = async () => {
    if (chunk.length === 0) return;
    const writes = chunk.flatMap((r) => (r.write ? [r.write] : []));
    const bad = chunk.filter((r) => r.error).map((r) => ({ line: r.line, error: r.error! }));
    const room = Math.max(0, MAX_STORED_ERRORS - errors.length);
    errors.push(...bad.slice(0, room));
    const n = chunk.length;
    chunk = [];
    await db.transaction().execute(async (trx) => {
      const stored = await upsertContacts(trx, job.company_id, writes, 'import');
      const created = stored.filter((c) => c.created).length;
      await addImportProgress(trx, job.import_id, { processed: n, created, updated: stored.length - created, failed: bad.length, errors });
    });
  };
  for await (const row of parseContactRows(Buffer.from(imp.csv), imp.delimiter)) {
    if (seen++ < imp.processed) continue; // written by an earlier run
    if ('error' in row) chunk.push({ line: row.line, error: row.error });
    else {
      const e164 = toE164(row.contact.phone, imp.default_country);
      if (!e164) chunk.push({ line: row.line, error: `"${row.contact.phone.slice(0, 40)}" is not a valid phone number` });
      // The consent ledger's evidence of an opt-out state the row sets: the import and the row's line.
      else chunk.push({ line: row.line, write: { ...row.contact, phone: e164, evidence: { import_id: job.import_id, line: row.line, actor: imp.actor } } });
    }
    if (chunk.length >= IMPORT_CHUNK) await flush();
  }
  await flush();
  const at = now().toISOString();
  await db.transaction().execute(async (trx) => {
    const done = await completeImportRow(trx, job.import_id, at);
    // The actor is the audit name stored when the import started (no Actor exists in the job).
    if (done) await recordAudit(trx, { actor: imp.actor, action: 'contacts.import', target: `import:${job.import_id}`, company_id: job.company_id, details: { ...done } });
  });
  return true;
}

/** The company's import `importId` (never the file itself); 404 `Import not found` otherwise. */
export async function getImport(db: Db, companyId: number, importId: number): Promise<ContactImport> {
  if (!Number.isSafeInteger(importId) || importId < 1) throw new DomainError(404, 'Import not found');
  const row = await selectImport(db, companyId, importId);
  if (!row) throw new DomainError(404, 'Import not found');
  return { ...row, import_id: Number(row.import_id) };
}
