/**
 * Contact import: GET /console/contacts/import shows the upload form and the recent
 * imports; POST /console/contacts/import (multipart/form-data: `_csrf`, `file`) checks the file and
 * starts the `contacts-import` job (domain/contact-imports.ts), then POST-redirect-GET to
 * /console/contacts/imports/{id}, the progress page, which asks the browser to reload it every 2 s
 * (a `Refresh` header: no JavaScript) until the import has finished. A file that cannot be imported
 * (too large, not UTF-8, no `phone` column with any delimiter, broken CSV, no rows) is reported beside
 * the file field (422) and nothing is written. Audit: `contacts.import` when the job finishes (actor
 * `console:<email>`).
 *
 * **Uploads.** @fastify/multipart is registered only in this route's own encapsulated scope (every
 * other console route keeps the urlencoded parser). A `preValidation` hook reads the whole form before
 * the console's CSRF check (`preHandler`) and sets its text fields as the body, so the check finds
 * `_csrf` where it always does; plugin.ts needs no change. Limits: the file MAX_IMPORT_BYTES (20 MiB;
 * more is reported beside the field), one file, four fields.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { consoleActor } from '../../domain/actor.ts';
import { createImport, getImport, MAX_IMPORT_BYTES, recentImports } from '../../domain/contact-imports.ts';
import { DomainError } from '../../domain/errors.ts';
import type { AppDeps } from '../../http/deps.ts';
import { can, nowOf, parseId, sendPage, sessionOf } from '../context.ts';
import { contactImportView, importProgressView } from '../views/contact-import.ts';
import { uploadScope } from '../uploads.ts';
import { BASE } from '../views/layout.ts';

/** Seconds between reloads of a running import's page. */
export const PROGRESS_REFRESH_S = 2;

/** Registers the import pages (signed-in scope; called by registerContactsPage). */
export function registerContactImportPages(scope: FastifyInstance, deps: AppDeps): void {
  const db = deps.database.db;

  async function showForm(request: FastifyRequest, reply: FastifyReply, status: number, error?: string) {
    const session = sessionOf(request);
    const rows = await recentImports(db, session.company_id);
    return sendPage(request, reply, status, {
      title: 'Import contacts', section: 'contacts', crumbs: [['Contacts', `${BASE}/contacts`], ['Import']],
      body: (csrf) => contactImportView({ csrf, error, recent: rows, canImport: can(request, 'POST', `${BASE}/contacts/import`) }),
    });
  }

  scope.get('/contacts/import', (request, reply) => showForm(request, reply, 200));

  scope.get<{ Params: { importId: string } }>('/contacts/imports/:importId', async (request, reply) => {
    const session = sessionOf(request);
    const imp = await getImport(db, session.company_id, parseId(request.params.importId));
    if (imp.status === 'queued' || imp.status === 'running') reply.header('refresh', String(PROGRESS_REFRESH_S));
    const canImport = can(request, 'POST', `${BASE}/contacts/import`);
    return sendPage(request, reply, 200, {
      title: `Import ${imp.filename ?? ''}`.trim(), section: 'contacts',
      crumbs: [['Contacts', `${BASE}/contacts`], ['Import', canImport ? `${BASE}/contacts/import` : undefined], [`Import ${imp.import_id}`]],
      body: () => importProgressView(imp, canImport),
    });
  });

  uploadScope(scope, { fileSize: MAX_IMPORT_BYTES, fields: 4, parts: 6, fieldSize: 1024 }, (upload) => {
    upload.post('/contacts/import', async (request, reply) => {
      const session = sessionOf(request);
      const got = request.consoleUpload ?? { truncatedFields: [] };
      if (got.problem) return showForm(request, reply, 422, got.problem);
      if (!got.file) return showForm(request, reply, 422, 'Choose a CSV file to import.');
      try {
        const imp = await createImport(db, deps.jobs, consoleActor(session), session.company_id, { bytes: got.file.data, filename: got.file.name || null }, nowOf(deps));
        return reply.header('cache-control', 'no-store').redirect(`${BASE}/contacts/imports/${imp.import_id}`, 303);
      } catch (err) {
        if (err instanceof DomainError && err.status === 400) return showForm(request, reply, 422, err.detail);
        throw err;
      }
    });
  });
}
