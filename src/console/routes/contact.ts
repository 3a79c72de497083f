/**
 * One contact: GET /console/contacts/:key, `key` a phone number
 * (E.164 or national) or a contact id: fields, variables, segments, opt-out state with source, time and
 * history, messages sent and inbound messages. Owners and marketers may change it (permissions.ts; the
 * plugin answers 403 to other roles' POSTs):
 *
 * - POST /contacts/:key/edit `first_name, last_name, var_count, var_name_<i>, var_value_<i>`: names and
 *   the whole set of variables (domain/contacts.ts `updateContact`, the operator API's rules); errors
 *   beside the field with the input kept (422), else 303 to the page with a notice;
 * - POST /contacts/:key/opt-out `opted_out=true|false`: opt-out by hand, source `console`, recorded in
 *   the consent ledger with the user's email and the button's wording as evidence;
 * - GET and POST /contacts/:key/erase: the erasure with a confirmation step (contact-erase.ts).
 *
 * Every change is audit-logged as `contact.update` by `console:<email>`. Unknown keys, erased contacts
 * and other companies' contacts answer 404 like any unknown page.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { getCompany } from '../../domain/companies.ts';
import { consentHistory } from '../../domain/consent.ts';
import { checkContactEdit, getContactView, updateContact, VARIABLES_MAX, type ContactView } from '../../domain/contacts.ts';
import type { AppDeps } from '../../http/deps.ts';
import { field, nowOf, sendPage, sessionOf } from '../context.ts';
import { isAllowed } from '../permissions.ts';
import { contactView, formOf, OPT_IN_WORDING, OPT_OUT_WORDING, variableText, type ContactForm, type ContactFormErrors } from '../views/contact.ts';
import { BASE } from '../views/layout.ts';
import { registerContactErasePages } from './contact-erase.ts';

/** Fixed notices after a change (`?done=`). */
const NOTICES: Record<string, string> = {
  saved: 'Changes saved.',
  unchanged: 'Nothing to change.',
  opted_out: 'The contact is opted out of campaigns (source: console).',
  opted_in: 'The contact is opted back in to campaigns (source: console).',
};

/** Most variable rows a form may send (stored variables plus empty rows). */
const MAX_FORM_ROWS = VARIABLES_MAX + 10;

/** The edit form as sent: names, and variables in row order (rows without a name dropped). */
function readForm(body: unknown): ContactForm {
  const count = Math.min(Math.max(Number.parseInt(field(body, 'var_count'), 10) || 0, 0), MAX_FORM_ROWS);
  const variables = [];
  for (let i = 0; i < count; i++) {
    const name = field(body, `var_name_${i}`).trim();
    const value = field(body, `var_value_${i}`);
    if (name !== '' || value !== '') variables.push({ name, value });
  }
  return { first_name: field(body, 'first_name').trim(), last_name: field(body, 'last_name').trim(), variables };
}

/** Registers the contact page and its changes (signed-in scope). */
export function registerContactPage(scope: FastifyInstance, deps: AppDeps): void {
  const db = deps.database.db;

  async function load(request: FastifyRequest<{ Params: { key: string } }>): Promise<ContactView> {
    const companyId = sessionOf(request).company_id;
    const company = await getCompany(db, companyId);
    return getContactView(db, companyId, company.default_country, request.params.key.slice(0, 64), true);
  }

  async function show(request: FastifyRequest, reply: FastifyReply, status: number, contact: ContactView, extra: { form?: ContactForm; errors?: ContactFormErrors; flash?: string } = {}) {
    const session = sessionOf(request);
    const canChange = isAllowed(session.role, 'POST', `${BASE}/contacts/x/edit`);
    const company = await getCompany(db, session.company_id);
    const consent = await consentHistory(db, session.company_id, company.default_country, contact.phone);
    return sendPage(request, reply, status, {
      title: `Contact ${contact.phone}`, section: 'contacts', crumbs: [['Contacts', `${BASE}/contacts`], [contact.phone]], flash: extra.flash,
      body: (csrf) => contactView({ contact, consent, csrf, canChange, form: extra.form ?? formOf(contact), errors: extra.errors ?? {} }),
    });
  }

  const pageOf = (c: ContactView, done: string) => `${BASE}/contacts/${encodeURIComponent(c.phone)}?done=${done}`;

  scope.get<{ Params: { key: string }; Querystring: { done?: string } }>('/contacts/:key', async (request, reply) => {
    const contact = await load(request);
    return show(request, reply, 200, contact, { flash: NOTICES[String(request.query.done ?? '')] });
  });

  scope.post<{ Params: { key: string } }>('/contacts/:key/edit', async (request, reply) => {
    const session = sessionOf(request);
    const contact = await load(request);
    const form = readForm(request.body);
    const errors: ContactFormErrors = {};
    const variables: Record<string, unknown> = {};
    for (const row of form.variables) {
      if (row.name === '') { errors.variables = `Give the variable with the value "${row.value.slice(0, 40)}" a name, or clear its value.`; break; }
      if (Object.hasOwn(variables, row.name)) { errors.variables = `The variable ${row.name} is named twice.`; break; }
      const stored = contact.variables[row.name];
      // A value that is no string (a number, a list) is shown as JSON; unchanged, it keeps its type.
      variables[row.name] = stored !== undefined && typeof stored !== 'string' && variableText(stored) === row.value ? stored : row.value;
    }
    const edit = { first_name: form.first_name || null, last_name: form.last_name || null, variables };
    Object.assign(errors, { ...checkContactEdit(edit), ...errors });
    if (Object.keys(errors).length) return show(request, reply, 422, contact, { form, errors });
    const changed = await updateContact(db, session.company_id, contact.contact_id, edit, { actor: `console:${session.email}`, source: 'console', now: nowOf(deps) });
    return reply.header('cache-control', 'no-store').redirect(pageOf(contact, changed.length ? 'saved' : 'unchanged'), 303);
  });

  scope.post<{ Params: { key: string } }>('/contacts/:key/opt-out', async (request, reply) => {
    const session = sessionOf(request);
    const contact = await load(request);
    const value = field(request.body, 'opted_out');
    if (value !== 'true' && value !== 'false') return show(request, reply, 422, contact, { flash: 'Choose to opt the contact out or back in.' });
    const optedOut = value === 'true';
    await updateContact(db, session.company_id, contact.contact_id, { opted_out: optedOut }, {
      actor: `console:${session.email}`, source: 'console', now: nowOf(deps), evidence: { user: session.email, wording: optedOut ? OPT_OUT_WORDING : OPT_IN_WORDING },
    });
    return reply.header('cache-control', 'no-store').redirect(pageOf(contact, optedOut ? 'opted_out' : 'opted_in'), 303);
  });

  registerContactErasePages(scope, deps, load);
}
