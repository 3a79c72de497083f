/**
 * Contacts (issue 11 item 6): GET /console/contacts lists the contacts that wrote most recently;
 * `?q=` searches by number: a full number that is a contact of the company redirects to its page (303),
 * otherwise contacts whose number contains the digits (at least 4) are listed. Session company only.
 */
import type { FastifyInstance } from 'fastify';
import { getCompany } from '../../domain/companies.ts';
import { findContact } from '../../db/contacts.ts';
import { toE164 } from '../../domain/phone.ts';
import type { AppDeps } from '../../http/deps.ts';
import { sendPage, sessionOf } from '../context.ts';
import { recentInboundContacts, searchContacts } from '../queries/contacts.ts';
import { contactsView } from '../views/contacts.ts';
import { BASE } from '../views/layout.ts';

/** Registers GET /contacts[?q=P] (signed-in scope). */
export function registerContactsPage(scope: FastifyInstance, deps: AppDeps): void {
  const db = deps.database.db;
  scope.get<{ Querystring: { q?: string } }>('/contacts', async (request, reply) => {
    const companyId = sessionOf(request).company_id;
    const query = typeof request.query.q === 'string' ? request.query.q.trim().slice(0, 64) : '';
    if (query) {
      const company = await getCompany(db, companyId);
      const e164 = toE164(query, company.default_country);
      if (e164 && await findContact(db, companyId, { phone: e164 })) return reply.redirect(`${BASE}/contacts/${encodeURIComponent(e164)}`, 303);
      const digits = query.replace(/\D/g, '');
      const rows = digits.length >= 4 ? await searchContacts(db, companyId, digits) : [];
      return sendPage(request, reply, 200, {
        title: `Contacts matching ${query}`, section: 'contacts', crumbs: [['Contacts', `${BASE}/contacts`], ['Search']],
        body: () => contactsView({ query, rows, searched: true }),
      });
    }
    const rows = await recentInboundContacts(db, companyId);
    return sendPage(request, reply, 200, {
      title: 'Contacts', section: 'contacts', crumbs: [['Contacts']],
      body: () => contactsView({ query: '', rows, searched: false }),
    });
  });
}
