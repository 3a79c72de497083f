/**
 * Contacts: GET /console/contacts lists the company's contacts by
 * number, 50 a page; `?q=` searches (domain/contacts.ts `parseContactQuery`, the operator API's rules):
 * a full number that is a contact of the company redirects to its page (303), otherwise contacts whose
 * number contains the digits (at least 4) or whose first or last name begins with each word are listed;
 * fewer than 4 digits is an error beside the field (400); `&tag=` keeps only the contacts with that tag
 * (alone or with a search; the field suggests the tags of the contacts shown). GET /console/contacts/export.csv streams every
 * contact as CSV (domain/contacts-export.ts; audit-logged as `contacts.export`: personal data leaves the service). Also registers the import pages (contact-import.ts).
 * Session company only; every role may read, owners and marketers may import (permissions.ts).
 */
import type { FastifyInstance } from 'fastify';
import { consoleActor } from '../../domain/actor.ts';
import { getCompany } from '../../domain/companies.ts';
import { listContacts, findContact } from '../../db/contacts.ts';
import { TAG_MAX_LENGTH } from '../../domain/contacts.ts';
import { parseContactQuery } from '../../domain/contacts.ts';
import { exportContacts, exportFileName } from '../../domain/contacts-export.ts';
import { DomainError } from '../../domain/errors.ts';
import { toE164 } from '../../domain/phone.ts';
import type { AppDeps } from '../../http/deps.ts';
import { sendPage, sessionOf } from '../context.ts';
import { isAllowed } from '../permissions.ts';
import { contactsView } from '../views/contacts.ts';
import { BASE } from '../views/layout.ts';
import { registerContactImportPages } from './contact-import.ts';

/** Contacts per page. */
export const CONTACTS_PAGE_SIZE = 50;

/** Fixed notices other pages may ask this page to show (`?done=`). */
const NOTICES: Record<string, string> = {
  erased: 'The contact was erased. Its personal data is gone; the counts of its sends are kept.',
  erased_suppressed: 'The contact was erased. Its personal data is gone; the counts of its sends are kept. The number stays opted out of campaigns if it comes back.',
};

/** Registers GET /contacts[?q=&tag=&after=], GET /contacts/export.csv and the import pages (signed-in scope). */
export function registerContactsPage(scope: FastifyInstance, deps: AppDeps): void {
  const db = deps.database.db;
  scope.get<{ Querystring: { q?: string; tag?: string; after?: string; done?: string } }>('/contacts', async (request, reply) => {
    const session = sessionOf(request);
    const companyId = session.company_id;
    const canChange = isAllowed(session.role, 'POST', `${BASE}/contacts`);
    const query = typeof request.query.q === 'string' ? request.query.q.trim().slice(0, 64) : '';
    const after = typeof request.query.after === 'string' ? request.query.after.slice(0, 64) : null;
    const tag = typeof request.query.tag === 'string' ? [...request.query.tag.trim()].slice(0, TAG_MAX_LENGTH).join('') : '';
    const title = query ? `Contacts matching ${query}${tag ? ` with the tag ${tag}` : ''}` : tag ? `Contacts with the tag ${tag}` : 'Contacts';
    const crumbs: [string, string?][] = query || tag ? [['Contacts', `${BASE}/contacts`], ['Search']] : [['Contacts']];
    if (query && !after && !tag) {
      const company = await getCompany(db, companyId);
      const e164 = toE164(query, company.default_country);
      if (e164 && await findContact(db, companyId, { phone: e164 })) return reply.redirect(`${BASE}/contacts/${encodeURIComponent(e164)}`, 303);
    }
    let filter;
    try {
      filter = parseContactQuery(query);
    } catch (err) {
      if (!(err instanceof DomainError)) throw err;
      return sendPage(request, reply, 400, {
        title, section: 'contacts', crumbs,
        body: () => contactsView({ query, tag, knownTags: [], rows: [], searched: true, error: `${err.detail}, or type a name.`, next: null, paged: false, canChange }),
      });
    }
    const page = await listContacts(db, companyId, filter, after, CONTACTS_PAGE_SIZE, tag || undefined);
    // Suggestions for the tag field: the tags of the contacts on this page (no query of their own: a
    // count of the company's tags read every tagged contact, 185 ms for 50,000 of them on PostgreSQL).
    const knownTags = [...new Set(page.rows.flatMap((r) => r.tags))].sort().slice(0, 100);
    return sendPage(request, reply, 200, {
      title, section: 'contacts', crumbs, flash: NOTICES[String(request.query.done ?? '')],
      body: () => contactsView({ query, tag, knownTags, rows: page.rows, searched: query !== '' || tag !== '', next: page.next, paged: !!after, canChange }),
    });
  });

  scope.get('/contacts/export.csv', async (request, reply) => {
    const session = sessionOf(request);
    const stream = await exportContacts(db, consoleActor(session), session.company_id);
    return reply.type('text/csv; charset=utf-8').header('cache-control', 'no-store')
      .header('content-disposition', `attachment; filename="${exportFileName(session.company_id, new Date(deps.clock.now()))}"`).send(stream);
  });

  registerContactImportPages(scope, deps);
}
