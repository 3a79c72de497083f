/**
 * The `contacts-import` job {import_id, company_id} (domain/contact-imports.ts): reads
 * the stored CSV, normalises each row's phone to E.164 (the company's default country) and writes the
 * contacts IMPORT_CHUNK rows at a time, each chunk in one transaction with the import's progress
 * (processed, created, updated, failed, the first invalid rows with their line numbers). Opt-out states
 * are recorded with source `import` and evidence `{import_id, line, actor}` (the consent ledger). Idempotent
 * and resumable: a run skips the rows already processed, and a completed or failed import is left as
 * it is. At the end the stored file is cleared, the import is `completed` and one audit entry
 * `contacts.import` (counts only) is written for the actor who uploaded it.
 */
import { sql } from 'kysely';
import { recordAudit } from '../../domain/audit.ts';
import { IMPORT_CHUNK, MAX_STORED_ERRORS, parseContactRows, type ImportRowError } from '../../domain/contact-imports.ts';
import { upsertContacts, type ContactWrite } from '../../domain/contacts.ts';
import { toE164 } from '../../domain/phone.ts';
import type { PipelineContext } from './context.ts';

/** Payload of the job. */
export interface ContactsImportJob { import_id: number; company_id: number }

interface ImportRow {
  actor: string; delimiter: string; csv: Uint8Array | null; status: string; processed: number;
  total: number; failed: number; errors: ImportRowError[]; default_country: string;
}

/** Runs (or resumes) one import; see the module comment. */
export async function runContactsImport(ctx: Pick<PipelineContext, 'db' | 'clock' | 'logger'>, job: ContactsImportJob): Promise<void> {
  const { db } = ctx;
  const { rows } = await sql<ImportRow>`
    SELECT i.actor, i.delimiter, i.csv, i.status, i.processed, i.total, i.failed, i.errors, c.default_country
    FROM contact_imports i JOIN companies c ON c.company_id = i.company_id
    WHERE i.import_id = ${job.import_id} AND i.company_id = ${job.company_id}`.execute(db);
  const imp = rows[0];
  if (!imp || imp.status === 'completed' || imp.status === 'failed' || !imp.csv) return;
  await sql`UPDATE contact_imports SET status = 'running' WHERE import_id = ${job.import_id} AND status = 'queued'`.execute(db);

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
      await sql`
        UPDATE contact_imports SET processed = processed + ${n}, created = created + ${created},
          updated = updated + ${stored.length - created}, failed = failed + ${bad.length}, errors = ${JSON.stringify(errors)}::jsonb
        WHERE import_id = ${job.import_id}`.execute(trx);
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
  const now = new Date(ctx.clock.now()).toISOString();
  await db.transaction().execute(async (trx) => {
    const { rows: done } = await sql<{ processed: number; created: number; updated: number; failed: number; total: number }>`
      UPDATE contact_imports SET status = 'completed', csv = NULL, finished_at = ${now}::timestamptz
      WHERE import_id = ${job.import_id} AND status <> 'completed'
      RETURNING processed, created, updated, failed, total`.execute(trx);
    if (done[0]) {
      await recordAudit(trx, { actor: imp.actor, action: 'contacts.import', target: `import:${job.import_id}`, company_id: job.company_id, details: { ...done[0] } });
    }
  });
  ctx.logger.info({ import_id: job.import_id, company_id: job.company_id }, 'contacts import completed');
}
