/**
 * Operator API: a company's contacts (docs/operator-api.md), with the same
 * rules as the console's Contacts pages and `cms contacts`. Another company's contact answers 404 like
 * an unknown one; an erased contact is unknown. Each change is a domain command (src/domain/contacts.ts,
 * contacts-export.ts, erasure.ts) run as the operator (`OPERATOR`), which records its audit entry (actor `admin`).
 *
 * | route | answers |
 * |---|---|
 * | PUT /admin/companies/{company_id}/contacts `{contacts}` (at most 10,000; `tags?` replaces a contact's tags) | 200 `ContactImportResult`; 401; 404 company; 422 |
 * | POST /admin/companies/{company_id}/contacts/tags `{contacts, set?, add?, remove?}` (at most 100,000) | 200 `ContactTagsChange`; 401; 404 company; 422 |
 * | GET /admin/companies/{company_id}/contacts?q=&tag=&after=&limit= | 200 `ContactList`; 401; 404 company; 422 (q: fewer than 4 digits) |
 * | GET /admin/companies/{company_id}/contacts/export | 200 text/csv, streamed; 401; 404 company; 422 |
 * | GET /admin/companies/{company_id}/contacts/{phone} | 200 `Contact`; 401; 404 company / contact; 422 |
 * | PATCH /admin/companies/{company_id}/contacts/{phone} `{first_name?, last_name?, variables?, opted_out?, consent_evidence?}` | 200 `Contact`; 401; 404; 422 |
 * | DELETE /admin/companies/{company_id}/contacts/{phone} (GDPR erasure) | 200 `ContactErasure`; 401; 404; 422 |
 *
 * A CSV import in the background is contact-imports.ts.
 *
 * Erasure is a DELETE on the contact (it disappears from every read; what it removes and keeps is in
 * domain/erasure.ts) answering 200 with what changed, not 204, so the operator sees the counts and
 * whether the number stays opted out (its consent ledger is kept; docs/audience.md). The ledger's
 * route is consent.ts.
 */
import type { Readable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { getCompany } from '../../domain/companies.ts';
import { actorName, OPERATOR } from '../../domain/actor.ts';
import {
  changeTags, CONTACT_VIEW_LIMIT, getContactView, TAG_CHANGE_MAX, TAG_MAX_LENGTH, TAGS_MAX, importContacts, ImportRulesError, MIN_SEARCH_DIGITS, parseContactQuery, resolveContact, updateContact,
  VARIABLE_VALUE_MAX, VARIABLES_MAX, type ContactView,
} from '../../domain/contacts.ts';
import { exportContacts, exportFileName } from '../../domain/contacts-export.ts';
import { eraseContact } from '../../domain/erasure.ts';
import { DomainError } from '../../domain/errors.ts';
import { VARIABLE_NAME } from '../../domain/contact-rules.ts';
import { listContacts } from '../../db/contacts.ts';
import type { AppDeps } from '../deps.ts';
import { AdminValidationError } from './errors.ts';
import {
  addComponents, adminErrors, commonHeaders, component, exampleOf, idParams, invalid, invalidInput, iso, notFound, ok, ref, rowId, TIME_EXAMPLE,
} from './components.ts';

const time = Type.String({ format: 'date-time' });
const nullableTime = (description?: string) => Type.Union([time, Type.Null()], description ? { description } : {});
const nullableString = (description?: string) => Type.Union([Type.String(), Type.Null()], description ? { description } : {});
const PHONE = '+4915112345678';
const tagList = (max: number, description: string) =>
  Type.Array(Type.String({ minLength: 1, maxLength: TAG_MAX_LENGTH }), { maxItems: max, description: `${description}: each 1 to ${TAG_MAX_LENGTH} characters, at most ${max}` });

/** A contact in a list. */
export const ContactListItem = component('ContactListItem', Type.Object({
  contact_id: Type.Integer(),
  phone: Type.String({ description: 'E.164' }),
  first_name: nullableString(),
  last_name: nullableString(),
  opted_out: Type.Boolean({ description: 'opted out of campaigns' }),
  opt_out_source: nullableString("where the opt-out state came from: 'keyword', 'whatsapp', 'operator', 'console', 'import' (every change is in the consent ledger)"),
  opt_out_at: nullableTime('when the opt-out state last changed'),
  last_inbound_at: nullableTime('the last message the contact sent'),
  tags: Type.Array(Type.String(), { description: 'its tags, sorted' }),
}), { contact_id: 311, phone: PHONE, first_name: 'Ada', last_name: 'Lovelace', opted_out: false, opt_out_source: null, opt_out_at: null, last_inbound_at: TIME_EXAMPLE, tags: ['vip'] });

/** A page of contacts. */
export const ContactList = component('ContactList', Type.Object({
  contacts: Type.Array(ref(ContactListItem), { description: 'by phone number' }),
  next_after: nullableString('pass as `after` for the next page; null on the last page'),
}), { contacts: [exampleOf(ContactListItem)], next_after: null });

const inboundItem = Type.Object({
  provider_message_id: Type.String(), type: Type.String({ description: '`text`, `button`, `interactive`, …' }),
  text: nullableString(), payload: nullableString(), received_at: time,
});
const sentItem = Type.Object({
  message_id: Type.String(), batch_id: Type.String(), kind: Type.String({ description: '`automation` or `campaign`' }),
  status: Type.String({ description: '`pending`, `sent`, `delivered`, `read`, `failed` or `skipped`' }),
  reason: nullableString('why it was skipped (`opted_out`, `frequency_cap`, `invalid_phone`, `cancelled`, `erased`)'),
  error: nullableString(), error_code: nullableString(), provider_message_id: nullableString(),
  sent_at: nullableTime(), delivered_at: nullableTime(), read_at: nullableTime(), failed_at: nullableTime(), created_at: time,
});

/** One contact with its segments, history, inbound and sent messages. */
export const Contact = component('Contact', Type.Object({
  contact_id: Type.Integer(),
  phone: Type.String({ description: 'E.164' }),
  first_name: nullableString(),
  last_name: nullableString(),
  variables: Type.Record(Type.String(), Type.Unknown(), { description: 'the contact\'s template variables' }),
  opted_out: Type.Boolean(),
  opt_out_source: nullableString("where the opt-out state came from: 'keyword', 'whatsapp', 'operator', 'console', 'import' (every change is in the consent ledger)"),
  opt_out_at: nullableTime('when the opt-out state last changed'),
  last_inbound_at: nullableTime('the last message the contact sent'),
  tags: Type.Array(Type.String(), { description: 'its tags, sorted' }),
  last_sent_at: nullableTime('when a message to it last reached `sent`'),
  last_delivered_at: nullableTime('when a message to it last reached `delivered`'),
  last_read_at: nullableTime('when a message to it last reached `read`'),
  country: nullableString('ISO 3166 alpha-2 country of the number; null when it has none (or not computed yet)'),
  window_open_until: nullableTime('when its WhatsApp customer-service window closes: 24 h after its last inbound message (a past time: closed), or null'),
  created_at: time,
  updated_at: time,
  segments: Type.Array(Type.Object({ segment_id: Type.Integer(), name: Type.String(), added_at: time }), { description: 'segments the contact is a member of, by name' }),
  history: Type.Array(Type.Object({
    at: time, actor: Type.String({ description: '`admin`, `console:<email>` or the importer' }),
    action: Type.String({ description: '`contact.update` (details: changed fields, new opt-out state)' }),
    details: Type.Record(Type.String(), Type.Unknown()),
  }), { description: `changes by hand, newest first (at most ${CONTACT_VIEW_LIMIT})` }),
  inbound: Type.Array(inboundItem, { description: `inbound messages, newest first (at most ${CONTACT_VIEW_LIMIT})` }),
  messages: Type.Array(sentItem, { description: `messages sent to the contact, newest first (at most ${CONTACT_VIEW_LIMIT})` }),
}), {
  contact_id: 311, phone: PHONE, first_name: 'Ada', last_name: 'Lovelace', variables: { tier: 'gold' }, opted_out: true,
  opt_out_source: 'operator', opt_out_at: TIME_EXAMPLE, last_inbound_at: '2026-03-02T09:30:00.000Z', tags: ['berlin', 'vip'],
  last_sent_at: TIME_EXAMPLE, last_delivered_at: TIME_EXAMPLE, last_read_at: TIME_EXAMPLE, country: 'DE', window_open_until: '2026-03-03T09:30:00.000Z',
  created_at: TIME_EXAMPLE, updated_at: TIME_EXAMPLE,
  segments: [{ segment_id: 4, name: 'Newsletter', added_at: TIME_EXAMPLE }],
  history: [{ at: TIME_EXAMPLE, actor: 'admin', action: 'contact.update', details: { changed: ['opted_out'], opted_out: true } }],
  inbound: [{ provider_message_id: 'wamid.HBgLNDkxNTE', type: 'text', text: 'STOP', payload: null, received_at: TIME_EXAMPLE }],
  messages: [{
    message_id: '0b7f3c1e-2a4d-4e5f-9a6b-7c8d9e0f1a2b', batch_id: '5d6e7f80-91a2-4b3c-8d4e-5f6071829304', kind: 'campaign', status: 'read',
    reason: null, error: null, error_code: null, provider_message_id: 'wamid.HBgLNDkxNTE', sent_at: TIME_EXAMPLE, delivered_at: TIME_EXAMPLE,
    read_at: TIME_EXAMPLE, failed_at: null, created_at: TIME_EXAMPLE,
  }],
});

/** What an erasure changed. */
export const ContactErasure = component('ContactErasure', Type.Object({
  contact_id: Type.Integer({ description: 'the erased contact (its row stays, without personal data)' }),
  messages: Type.Integer({ minimum: 0, description: 'messages whose phone and rendered content were removed (statuses kept)' }),
  skipped: Type.Integer({ minimum: 0, description: 'of them, waiting messages that became `skipped` with reason `erased`' }),
  inbound: Type.Integer({ minimum: 0, description: 'inbound messages whose text and payload were removed' }),
  segments: Type.Integer({ minimum: 0, description: 'segment memberships removed' }),
  events: Type.Integer({ minimum: 0, description: 'stored events whose phone and texts were removed' }),
  consent_entries: Type.Integer({ minimum: 0, description: 'consent ledger entries kept under the SHA-256 of the number, without personal data' }),
  suppressed: Type.Boolean({ description: 'true: the number stays opted out of campaigns if it comes back (import, send, inbound) until it opts in again' }),
}), { contact_id: 311, messages: 12, skipped: 0, inbound: 2, segments: 1, events: 3, consent_entries: 1, suppressed: true });

/** The counts of a JSON import. */
export const ContactImportResult = component('ContactImportResult', Type.Object({
  created: Type.Integer({ minimum: 0 }), updated: Type.Integer({ minimum: 0 }),
  invalid: Type.Integer({ minimum: 0, description: 'numbers that are no valid phone number (not written)' }),
}), { created: 2, updated: 1, invalid: 0 });

/** What a change of tags did. */
export const ContactTagsChange = component('ContactTagsChange', Type.Object({
  matched: Type.Integer({ minimum: 0, description: 'contacts found (their tags now have `add` and not `remove`)' }),
  not_found: Type.Integer({ minimum: 0, description: 'distinct numbers that name no contact, invalid ones included' }),
}), { matched: 2, not_found: 1 });

const companyParams = idParams('company_id', 'the company', 12);
const phoneParams = Type.Object({
  company_id: rowId('the company', 12),
  phone: Type.String({ minLength: 1, maxLength: 64, description: "E.164 or national (the company's default country)", examples: [PHONE] }),
});

const isoOrNull = (d: Date | string | null) => (d ? new Date(d).toISOString() : null);

function viewOut(c: ContactView) {
  return {
    ...c,
    inbound: c.inbound.map((m) => ({ ...m, received_at: iso(new Date(m.received_at)) })),
    messages: c.messages.map((m) => ({
      ...m, sent_at: isoOrNull(m.sent_at), delivered_at: isoOrNull(m.delivered_at), read_at: isoOrNull(m.read_at),
      failed_at: isoOrNull(m.failed_at), created_at: iso(new Date(m.created_at)),
    })),
    opt_out_at: c.opt_out_at ? iso(new Date(c.opt_out_at)) : null,
    last_inbound_at: isoOrNull(c.last_inbound_at), window_open_until: isoOrNull(c.window_open_until),
    last_sent_at: isoOrNull(c.last_sent_at), last_delivered_at: isoOrNull(c.last_delivered_at), last_read_at: isoOrNull(c.last_read_at),
    country: c.country || null,
    created_at: iso(new Date(c.created_at)), updated_at: iso(new Date(c.updated_at)),
    segments: c.segments.map((s) => ({ ...s, segment_id: Number(s.segment_id), added_at: iso(new Date(s.added_at)) })),
    history: c.history.map((h) => ({ ...h, at: iso(new Date(h.at)) })),
  };
}

/** The export's body: CSV text, sent as a stream (documented as a string). */
const csvBody = Type.Unsafe<string | Readable>({ type: 'string' });

/** Registers the routes of the module comment. */
export function registerContactRoutes(app: FastifyInstance, deps: AppDeps): void {
  const db = deps.database.db;
  const tags = ['operator: contacts'];
  addComponents(app, [ContactListItem, ContactList, Contact, ContactErasure, ContactImportResult, ContactTagsChange]);
  const r = app.withTypeProvider<TypeBoxTypeProvider>();

  r.put('/admin/companies/:company_id/contacts', {
    bodyLimit: 16 * 1024 * 1024,
    schema: {
      tags, operationId: 'import_contacts', summary: 'Create or update contacts (at most 10,000 a request)',
      description: 'Phones are normalised with the company\'s default country; given names replace, variables are merged, an opt-out state that changes is recorded with source `operator` (and in the consent ledger). A number whose erased contact had opted out comes back opted out, whatever `opted_out` says. Names and variables keep the rules of PATCH …/contacts/{phone}: an item that breaks them refuses the request (422, `loc` naming the item and the variable, the first 100 such items) and nothing is written.',
      params: companyParams,
      body: Type.Object({
        contacts: Type.Array(Type.Object({
          phone: Type.String({ maxLength: 64 }),
          first_name: Type.Optional(Type.Union([Type.String({ maxLength: 255 }), Type.Null()])),
          last_name: Type.Optional(Type.Union([Type.String({ maxLength: 255 }), Type.Null()])),
          variables: Type.Optional(Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()], {
            description: `merged into the stored ones; the rules of PATCH: names a letter or _ then letters, digits, _ (at most 64); string values at most ${VARIABLE_VALUE_MAX} characters; at most ${VARIABLES_MAX} (422 at \`body.contacts.i.variables.NAME\` otherwise)`,
          })),
          opted_out: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])),
          tags: Type.Optional(Type.Union([tagList(TAGS_MAX, 'replaces the contact\'s tags (absent or null: kept)'), Type.Null()])),
          consent_evidence: Type.Optional(Type.Union([Type.String({ maxLength: 1000 }), Type.Null()], { description: 'what proves an opt-out state this sets (a form\'s wording, a ticket): kept as the consent ledger\'s `evidence.note`' })),
        }), { maxItems: 10_000 }),
      }, { examples: [{ contacts: [{ phone: PHONE, first_name: 'Ada', variables: { tier: 'gold' }, tags: ['vip', 'berlin'] }, { phone: '015112345679', opted_out: true }] }] }),
      response: {
        200: ok('What was written', ref(ContactImportResult), exampleOf(ContactImportResult)),
        ...adminErrors,
        404: notFound('Company not found'),
        422: invalid({ type: 'maxLength', loc: ['body', 'contacts', 3, 'phone'], msg: 'must NOT have more than 64 characters' }),
      },
    },
  }, async (request) => {
    const company = await getCompany(db, request.params.company_id);
    return importContacts(db, OPERATOR, company, request.body.contacts)
      .catch((err: unknown) => {
        if (!(err instanceof ImportRulesError)) throw err;
        throw new AdminValidationError(err.problems.map((p) => ({
          type: 'value_error', loc: ['body', 'contacts', p.index, p.field, ...(p.variable === undefined ? [] : [p.variable])], msg: p.message,
        })));
      });
  });

  r.post('/admin/companies/:company_id/contacts/tags', {
    bodyLimit: 16 * 1024 * 1024,
    schema: {
      tags, operationId: 'change_contact_tags', summary: 'Add and remove tags of many contacts at once',
      description: `Numbers in any form the company's default country parses (at most ${TAG_CHANGE_MAX.toLocaleString('en')}); \`set\` replaces each contact's tags (then \`add\` and \`remove\` apply; \`set: []\` clears them); a tag both added and removed is removed; one transaction. A contact that would hold more than ${TAGS_MAX} tags refuses the whole change (422).`,
      params: companyParams,
      body: Type.Object({
        contacts: Type.Array(Type.String({ maxLength: 64 }), { minItems: 1, maxItems: TAG_CHANGE_MAX }),
        set: Type.Optional(tagList(TAGS_MAX, 'the tags each contact gets instead of its own (before `add` and `remove`)')),
        add: Type.Optional(tagList(TAGS_MAX, 'tags to add')),
        remove: Type.Optional(tagList(TAGS_MAX, 'tags to remove')),
      }, { examples: [{ contacts: [PHONE, '015112345679'], add: ['vip'], remove: ['trial'] }, { contacts: [PHONE], set: ['customer', 'berlin'] }] }),
      response: {
        200: ok('What changed', ref(ContactTagsChange), exampleOf(ContactTagsChange)),
        ...adminErrors,
        404: notFound('Company not found'),
        422: invalid({ type: 'maxLength', loc: ['body', 'add', 0], msg: `must NOT have more than ${TAG_MAX_LENGTH} characters` }),
      },
    },
  }, async (request) => {
    const company = await getCompany(db, request.params.company_id);
    try {
      return await changeTags(db, OPERATOR, company, request.body);
    } catch (err) {
      if (err instanceof DomainError && err.status === 422) throw invalidInput(['body', 'add'], err.detail);
      throw err;
    }
  });

  r.get('/admin/companies/:company_id/contacts', {
    schema: {
      tags, operationId: 'list_contacts', summary: 'List or search contacts (by number digits or name, and by tag), paged by phone',
      params: companyParams,
      querystring: Type.Object({
        q: Type.Optional(Type.String({ maxLength: 64, description: `a number (at least ${MIN_SEARCH_DIGITS} of its digits, found anywhere in it) or name words (each a case-insensitive prefix of the first or last name); empty: every contact`, examples: ['ada love'] })),
        tag: Type.Optional(Type.String({ minLength: 1, maxLength: TAG_MAX_LENGTH, description: 'only contacts with this tag', examples: ['vip'] })),
        after: Type.Optional(Type.String({ maxLength: 64, description: 'the `next_after` of the previous page' })),
        limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 50 })),
      }),
      response: {
        200: ok('One page of contacts', ref(ContactList), exampleOf(ContactList)),
        ...adminErrors,
        404: notFound('Company not found'),
        422: invalid({ type: 'value_error', loc: ['query', 'q'], msg: `Search by number needs at least ${MIN_SEARCH_DIGITS} digits` }),
      },
    },
  }, async (request) => {
    const company = await getCompany(db, request.params.company_id);
    let filter;
    try {
      filter = parseContactQuery(request.query.q ?? '');
    } catch (err) {
      if (err instanceof DomainError) throw invalidInput(['query', 'q'], err.detail, 'value_error', request.query.q);
      throw err;
    }
    const page = await listContacts(db, company.company_id, filter, request.query.after ?? null, request.query.limit ?? 50, request.query.tag);
    return {
      contacts: page.rows.map((c) => ({ ...c, opt_out_at: c.opt_out_at ? iso(new Date(c.opt_out_at)) : null, last_inbound_at: c.last_inbound_at ? iso(new Date(c.last_inbound_at)) : null })),
      next_after: page.next,
    };
  });

  r.get('/admin/companies/:company_id/contacts/export', {
    schema: {
      tags, operationId: 'export_contacts', summary: 'Every contact as CSV (streamed, any number of contacts)',
      description: 'Columns `phone, first_name, last_name, opted_out, opt_out_source, opt_out_at, tags` (separated by `|`), the facts the service keeps `phone_country, last_inbound_at, last_sent_at, last_delivered_at, last_read_at`, then one per variable name. Importing the file again changes nothing (the opt-out\'s source and time and the facts are not imported).',
      params: companyParams,
      produces: ['text/csv'],
      response: {
        200: {
          description: 'The CSV, streamed in pages of 1,000 contacts',
          headers: { ...commonHeaders, 'cache-control': { type: 'string', description: 'always `no-store`: the file holds personal data', examples: ['no-store'] }, 'content-disposition': { type: 'string', description: 'attachment with a file name', examples: ['attachment; filename="contacts-12-2026-03-02.csv"'] } },
          content: { 'text/csv': { schema: csvBody, example: `phone,first_name,last_name,opted_out,opt_out_source,opt_out_at,tags,phone_country,last_inbound_at,last_sent_at,last_delivered_at,last_read_at,tier\n${PHONE},Ada,Lovelace,false,,,vip,DE,,${TIME_EXAMPLE},${TIME_EXAMPLE},,gold\n` } },
        },
        ...adminErrors,
        404: notFound('Company not found'),
        422: invalid({ type: 'type', loc: ['path', 'company_id'], msg: 'must be integer' }),
      },
    },
  }, async (request, reply) => {
    const company = await getCompany(db, request.params.company_id);
    const stream = await exportContacts(db, OPERATOR, company.company_id);
    return reply.type('text/csv; charset=utf-8').header('cache-control', 'no-store')
      .header('content-disposition', `attachment; filename="${exportFileName(company.company_id, new Date(deps.clock.now()))}"`).send(stream);
  });

  r.get('/admin/companies/:company_id/contacts/:phone', {
    schema: {
      tags, operationId: 'get_contact',
      summary: 'One contact: fields, variables, segments, opt-out state and history, inbound messages and messages sent',
      params: phoneParams,
      response: {
        200: ok('The contact', ref(Contact), exampleOf(Contact)),
        ...adminErrors,
        404: notFound('Contact not found', 'Unknown company (`Company not found`), or no such contact of this company (`Contact not found`)'),
        422: invalid({ type: 'maxLength', loc: ['path', 'phone'], msg: 'must NOT have more than 64 characters' }),
      },
    },
  }, async (request) => {
    const company = await getCompany(db, request.params.company_id);
    return viewOut(await getContactView(db, company.company_id, company.default_country, request.params.phone));
  });

  r.patch('/admin/companies/:company_id/contacts/:phone', {
    schema: {
      tags, operationId: 'update_contact', summary: 'Change a contact\'s names, variables (the whole set) or opt-out state',
      description: 'An opt-out state that changes is recorded with source `operator`, the time and evidence (`consent_evidence`) in the consent ledger; the change is audit-logged (field names, never values).',
      params: phoneParams,
      body: Type.Object({
        first_name: Type.Optional(Type.Union([Type.String({ maxLength: 255 }), Type.Null()])),
        last_name: Type.Optional(Type.Union([Type.String({ maxLength: 255 }), Type.Null()])),
        variables: Type.Optional(Type.Record(Type.String({ pattern: VARIABLE_NAME.source }), Type.Unknown(), {
          maxProperties: VARIABLES_MAX, description: `replaces every variable: names a letter or _ then letters, digits, _ (at most 64); string values at most ${VARIABLE_VALUE_MAX} characters`,
        })),
        opted_out: Type.Optional(Type.Boolean()),
        consent_evidence: Type.Optional(Type.Union([Type.String({ maxLength: 1000 }), Type.Null()], { description: 'what proves an opt-out state this sets (a form\'s wording, a ticket): kept as the consent ledger\'s `evidence.note`' })),
      }, { examples: [{ variables: { tier: 'gold', city: 'Berlin' }, opted_out: true, consent_evidence: 'Asked by phone to stop offers (ticket 4711)' }] }),
      response: {
        200: ok('The contact after the change', ref(Contact), exampleOf(Contact)),
        ...adminErrors,
        404: notFound('Contact not found', 'Unknown company (`Company not found`), or no such contact of this company (`Contact not found`)'),
        422: invalid({ type: 'pattern', loc: ['body', 'variables', 'bad name'], msg: 'must match pattern "^[A-Za-z_][A-Za-z0-9_]{0,63}$"' }),
      },
    },
  }, async (request) => {
    const company = await getCompany(db, request.params.company_id);
    const contact = await resolveContact(db, company.company_id, company.default_country, request.params.phone);
    await updateContact(db, OPERATOR, company.company_id, contact.contact_id, request.body, { now: new Date(deps.clock.now()), evidence: { actor: actorName(OPERATOR), operation: 'update_contact' } });
    return viewOut(await getContactView(db, company.company_id, company.default_country, contact.phone));
  });

  r.delete('/admin/companies/:company_id/contacts/:phone', {
    schema: {
      tags, operationId: 'erase_contact', summary: 'Erase a contact (GDPR Art. 17): personal data removed, counts kept',
      description: 'The contact\'s number, names and variables, its messages\' numbers and rendered content, its inbound texts and its segment memberships are removed; statuses and counts stay. Audit-logged without personal data. Its consent ledger stays under the SHA-256 of the number: a later import, send or inbound message creates a new contact that starts in the ledger\'s state (`suppressed`: opted out).',
      params: phoneParams,
      response: {
        200: ok('Erased; what changed', ref(ContactErasure), exampleOf(ContactErasure)),
        ...adminErrors,
        404: notFound('Contact not found', 'Unknown company (`Company not found`), no such contact of this company, or erased already (`Contact not found`)'),
        422: invalid({ type: 'maxLength', loc: ['path', 'phone'], msg: 'must NOT have more than 64 characters' }),
      },
    },
  }, async (request) => {
    const company = await getCompany(db, request.params.company_id);
    const contact = await resolveContact(db, company.company_id, company.default_country, request.params.phone);
    return eraseContact(db, OPERATOR, company.company_id, contact.contact_id, new Date(deps.clock.now()));
  });


}
