/**
 * One contact (issue 11 item 6): GET /console/contacts/:key, `key` a phone number (E.164 or national)
 * or a contact id: fields, opt-out state with source and time, inbound messages and messages sent.
 * Unknown keys and other companies' contacts answer 404 like any unknown page.
 */
import type { FastifyInstance } from 'fastify';
import { getCompany } from '../../domain/companies.ts';
import { getContactView } from '../../domain/contacts.ts';
import type { AppDeps } from '../../http/deps.ts';
import { sendPage, sessionOf } from '../context.ts';
import { contactView } from '../views/contact.ts';
import { BASE } from '../views/layout.ts';

/** Registers GET /contacts/:key (signed-in scope). */
export function registerContactPage(scope: FastifyInstance, deps: AppDeps): void {
  const db = deps.database.db;
  scope.get<{ Params: { key: string } }>('/contacts/:key', async (request, reply) => {
    const companyId = sessionOf(request).company_id;
    const company = await getCompany(db, companyId);
    const contact = await getContactView(db, companyId, company.default_country, request.params.key.slice(0, 64), true);
    return sendPage(request, reply, 200, {
      title: `Contact ${contact.phone}`, section: 'contacts', crumbs: [['Contacts', `${BASE}/contacts`], [contact.phone]],
      body: () => contactView(contact),
    });
  });
}
