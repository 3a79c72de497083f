/**
 * Operator API: a contact's consent ledger (docs/audience.md "The consent ledger"; the rules are
 * src/domain/consent.ts).
 *
 * | route | answers |
 * |---|---|
 * | GET /admin/companies/{company_id}/contacts/{phone}/consent | 200 `ConsentLedger` (oldest first); 401; 404 company / contact; 422 |
 *
 * The number's entries include those of erased contacts that had it (kept without personal data), so
 * the route answers for a number whose contact was erased too; a number the company never knew is 404.
 */
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { getCompany } from '../../domain/companies.ts';
import { CONSENT_SOURCES, consentHistory } from '../../domain/consent.ts';
import type { AppDeps } from '../deps.ts';
import { addComponents, adminErrors, component, exampleOf, freeObject, invalid, iso, notFound, ok, ref, rowId, TIME_EXAMPLE } from './components.ts';

/** One change of a number's opt-out state. */
export const ConsentEntry = component('ConsentEntry', Type.Object({
  at: Type.String({ format: 'date-time', description: 'when the state changed (a keyword: when its message was sent)' }),
  opted_out: Type.Boolean({ description: 'the state from then on: true opted out, false opted (back) in' }),
  source: Type.String({ description: `where the change came from: ${CONSENT_SOURCES.map((s) => `\`${s}\``).join(', ')}` }),
  category: Type.String({ description: 'what the consent is about: `marketing` (the only category campaigns respect)' }),
  evidence: Type.Union([freeObject({ description: 'what proves it: keyword {inbound_message_id, text}; whatsapp {error_code, message_id}; operator {actor, operation, note?}; console {user, wording}; import {import_id, line, actor}' }), Type.Null()]),
}), { at: TIME_EXAMPLE, opted_out: true, source: 'keyword', category: 'marketing', evidence: { inbound_message_id: 'wamid.HBgLNDkxNTE', text: 'STOP' } });

/** A number's ledger. */
export const ConsentLedger = component('ConsentLedger', Type.Object({
  entries: Type.Array(ref(ConsentEntry), { description: 'oldest first, in the order recorded (at most 10,000)' }),
}), {
  entries: [
    { at: '2026-01-10T08:00:00.000Z', opted_out: true, source: 'keyword', category: 'marketing', evidence: { inbound_message_id: 'wamid.HBgLNDkxNTE', text: 'STOP' } },
    { at: TIME_EXAMPLE, opted_out: false, source: 'console', category: 'marketing', evidence: { user: 'anna@acme-shoes.example', wording: 'Opt back in to campaigns' } },
  ],
});

/** Registers the route of the module comment. */
export function registerConsentRoutes(app: FastifyInstance, deps: AppDeps): void {
  const db = deps.database.db;
  addComponents(app, [ConsentEntry, ConsentLedger]);
  const r = app.withTypeProvider<TypeBoxTypeProvider>();

  r.get('/admin/companies/:company_id/contacts/:phone/consent', {
    schema: {
      tags: ['operator: contacts'], operationId: 'get_contact_consent',
      summary: "A number's consent ledger: every change of its opt-out state with source and evidence, oldest first",
      description: 'Kept under the SHA-256 of the number: the entries of erased contacts that had it are included (without personal data).',
      params: Type.Object({
        company_id: rowId('the company', 12),
        phone: Type.String({ minLength: 1, maxLength: 64, description: "E.164 or national (the company's default country)", examples: ['+4915112345678'] }),
      }),
      response: {
        200: ok('The ledger', ref(ConsentLedger), exampleOf(ConsentLedger)),
        ...adminErrors,
        404: notFound('Contact not found', 'Unknown company (`Company not found`), no valid number, or a number the company has neither a contact nor entries for (`Contact not found`)'),
        422: invalid({ type: 'maxLength', loc: ['path', 'phone'], msg: 'must NOT have more than 64 characters' }),
      },
    },
  }, async (request) => {
    const company = await getCompany(db, request.params.company_id);
    const entries = await consentHistory(db, company.company_id, company.default_country, request.params.phone);
    return { entries: entries.map((e) => ({ ...e, at: iso(new Date(e.at)) })) };
  });
}
