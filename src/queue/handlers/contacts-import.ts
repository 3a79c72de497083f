/**
 * The `contacts-import` job {import_id, company_id}: runs (or resumes) the import through
 * src/domain/contact-imports.ts `runContactImport` (chunks, progress, the consent ledger's evidence,
 * the final `contacts.import` audit entry), with the service clock, and logs its end.
 */
import { runContactImport, type ContactsImportJob } from '../../domain/contact-imports.ts';
import type { PipelineContext } from './context.ts';

export type { ContactsImportJob };

/** Runs (or resumes) one import; see the module comment. */
export async function runContactsImport(ctx: Pick<PipelineContext, 'db' | 'clock' | 'logger'>, job: ContactsImportJob): Promise<void> {
  const ran = await runContactImport(ctx.db, job, () => new Date(ctx.clock.now()));
  if (ran) ctx.logger.info({ import_id: job.import_id, company_id: job.company_id }, 'contacts import completed');
}
