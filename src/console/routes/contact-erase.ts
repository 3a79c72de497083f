/**
 * Erasing a contact from the console (GDPR Art. 17): GET /console/contacts/:key/erase
 * shows what will be removed and asks for a confirmation (a checkbox); POST erases
 * (domain/erasure.ts: the same as `DELETE /admin/companies/{id}/contacts/{phone}`), audit-logged as
 * `contact.erase` by `console:<email>` without personal data, then 303 to the contact list with a
 * notice. Without the confirmation: 422 with the error beside the checkbox, nothing erased. Owners
 * and marketers only (permissions.ts); another company's contact is 404.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ContactView } from '../../domain/contacts.ts';
import { consoleActor } from '../../domain/actor.ts';
import { eraseContact } from '../../domain/erasure.ts';
import type { AppDeps } from '../../http/deps.ts';
import { can, field, nowOf, sendPage, sessionOf } from '../context.ts';
import { contactEraseView } from '../views/contact.ts';
import { BASE } from '../views/layout.ts';

type Load = (request: FastifyRequest<{ Params: { key: string } }>) => Promise<ContactView>;

/** Registers GET and POST /contacts/:key/erase (signed-in scope; called by registerContactPage). */
export function registerContactErasePages(scope: FastifyInstance, deps: AppDeps, load: Load): void {
  const db = deps.database.db;
  const page = (request: FastifyRequest, contact: ContactView) => ({
    title: `Erase ${contact.phone}`, section: 'contacts' as const,
    crumbs: [['Contacts', `${BASE}/contacts`], [contact.phone, `${BASE}/contacts/${encodeURIComponent(contact.phone)}`], ['Erase']] as [string, string?][],
  });

  scope.get<{ Params: { key: string } }>('/contacts/:key/erase', async (request, reply) => {
    const contact = await load(request);
    return sendPage(request, reply, 200, { ...page(request, contact), body: (csrf) => contactEraseView({ contact, csrf, canErase: can(request, 'POST', `${BASE}/contacts/:key/erase`) }) });
  });

  scope.post<{ Params: { key: string } }>('/contacts/:key/erase', async (request, reply) => {
    const session = sessionOf(request);
    const contact = await load(request);
    if (field(request.body, 'confirm') !== 'yes') {
      return sendPage(request, reply, 422, { ...page(request, contact), body: (csrf) => contactEraseView({ contact, csrf, error: 'Tick the box to confirm the erasure.' }) });
    }
    const erased = await eraseContact(db, consoleActor(session), session.company_id, contact.contact_id, nowOf(deps));
    return reply.header('cache-control', 'no-store').redirect(`${BASE}/contacts?done=${erased.suppressed ? 'erased_suppressed' : 'erased'}`, 303);
  });
}
