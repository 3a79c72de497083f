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
 * - POST /contacts/:key/tags `add=a, b` (comma-separated) or `remove=TAG`: the contact's tags through
 *   the command `tagContact` (domain/contacts.ts, the rules of the operator API's change of tags: 1 to 64 characters each, at most
 *   100 per contact); refused: 422 with the error beside the field and the input kept, else 303 back;
 * - GET and POST /contacts/:key/erase: the erasure with a confirmation step (contact-erase.ts).
 *
 * Every change is a domain command run as the signed-in user (`consoleActor`), which audit-logs it as
 * `contact.update` by `console:<email>` (tags: the tags added and removed). Unknown keys, erased contacts
 * and other companies' contacts answer 404 like any unknown page.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { consoleActor } from '../../domain/actor.ts';
import { getCompany } from '../../domain/companies.ts';
import { consentHistory } from '../../domain/consent.ts';
import { checkContactEdit, getContactView, tagContact, TAG_MAX_LENGTH, TAGS_MAX, updateContact, VARIABLES_MAX, type ContactView } from '../../domain/contacts.ts';
import { DomainError } from '../../domain/errors.ts';
import type { AppDeps } from '../../http/deps.ts';
import { field, nowOf, sendPage, sessionOf } from '../context.ts';
import { isAllowed } from '../permissions.ts';
import { sourceNamesOf } from '../queries/sends.ts';
import { contactView, formOf, OPT_IN_WORDING, OPT_OUT_WORDING, variableText, type ContactForm, type ContactFormErrors } from '../views/contact.ts';
import { BASE } from '../views/layout.ts';
import { registerContactErasePages } from './contact-erase.ts';

/** Fixed notices after a change (`?done=`). */
const NOTICES: Record<string, string> = {
  saved: 'Changes saved.',
  unchanged: 'Nothing to change.',
  opted_out: 'The contact is opted out of campaigns (source: console).',
  opted_in: 'The contact is opted back in to campaigns (source: console).',
  tags: 'Tags saved.',
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

  async function show(request: FastifyRequest, reply: FastifyReply, status: number, contact: ContactView, extra: { form?: ContactForm; errors?: ContactFormErrors; flash?: string; tagsInput?: string; tagsError?: string } = {}) {
    const session = sessionOf(request);
    const canChange = isAllowed(session.role, 'POST', `${BASE}/contacts/x/edit`);
    const company = await getCompany(db, session.company_id);
    const consent = await consentHistory(db, session.company_id, company.default_country, contact.phone);
    const sourceNames = await sourceNamesOf(db, session.company_id, [...new Set(contact.messages.map((x) => x.batch_id))]);
    return sendPage(request, reply, status, {
      title: `Contact ${contact.phone}`, section: 'contacts', crumbs: [['Contacts', `${BASE}/contacts`], [contact.phone]], flash: extra.flash,
      body: (csrf) => contactView({ contact, consent, sourceNames, csrf, canChange, form: extra.form ?? formOf(contact), errors: extra.errors ?? {}, tagsInput: extra.tagsInput, tagsError: extra.tagsError }),
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
    const changed = await updateContact(db, consoleActor(session), session.company_id, contact.contact_id, edit, { now: nowOf(deps) });
    return reply.header('cache-control', 'no-store').redirect(pageOf(contact, changed.length ? 'saved' : 'unchanged'), 303);
  });

  scope.post<{ Params: { key: string } }>('/contacts/:key/opt-out', async (request, reply) => {
    const session = sessionOf(request);
    const contact = await load(request);
    const value = field(request.body, 'opted_out');
    if (value !== 'true' && value !== 'false') return show(request, reply, 422, contact, { flash: 'Choose to opt the contact out or back in.' });
    const optedOut = value === 'true';
    await updateContact(db, consoleActor(session), session.company_id, contact.contact_id, { opted_out: optedOut }, {
      now: nowOf(deps), evidence: { user: session.email, wording: optedOut ? OPT_OUT_WORDING : OPT_IN_WORDING },
    });
    return reply.header('cache-control', 'no-store').redirect(pageOf(contact, optedOut ? 'opted_out' : 'opted_in'), 303);
  });

  scope.post<{ Params: { key: string } }>('/contacts/:key/tags', async (request, reply) => {
    const session = sessionOf(request);
    const contact = await load(request);
    const input = field(request.body, 'add');
    const removing = field(request.body, 'remove');
    const add = [...new Set(input.split(',').map((t) => t.trim()).filter((t) => t !== ''))];
    const remove = removing === '' ? [] : [removing];
    const refuse = (tagsError: string) => show(request, reply, 422, contact, { tagsInput: input, tagsError });
    if (add.length === 0 && remove.length === 0) return refuse('Enter a tag to add.');
    const long = add.find((t) => [...t].length > TAG_MAX_LENGTH);
    if (long !== undefined) return refuse(`A tag has at most ${TAG_MAX_LENGTH} characters ("${[...long].slice(0, 20).join('')}…" has ${[...long].length}).`);
    const added = add.filter((t) => !contact.tags.includes(t));
    const removed = remove.filter((t) => contact.tags.includes(t));
    if (contact.tags.length + added.length - removed.length > TAGS_MAX) return refuse(`A contact has at most ${TAGS_MAX} tags: this one has ${contact.tags.length}. Remove some first.`);
    try {
      await tagContact(db, consoleActor(session), session.company_id, contact, added, removed);
    } catch (err) {
      if (err instanceof DomainError && err.status === 422) return refuse(`${err.detail}.`);
      throw err;
    }
    return reply.header('cache-control', 'no-store').redirect(pageOf(contact, added.length || removed.length ? 'tags' : 'unchanged'), 303);
  });

  registerContactErasePages(scope, deps, load);
}
