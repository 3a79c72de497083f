/**
 * Operator API: contact import (operator-api.md PUT /admin/companies/{id}/contacts, at most 10,000;
 * opt-out changes recorded with source `operator`) and one contact's view (issue 11 item 6,
 * GET /admin/companies/{id}/contacts/{phone}: fields, opt-out state with source and time, inbound
 * messages and messages sent, newest first, at most 100 each; 404 when unknown or another company's).
 */
import type { FastifyInstance } from 'fastify';
import { getCompany } from '../../domain/companies.ts';
import { CONTACT_VIEW_LIMIT, getContactView, importContacts, type ImportRow } from '../../domain/contacts.ts';
import { recordAudit } from '../../domain/audit.ts';
import type { AppDeps } from '../deps.ts';
import { detailResponse } from './schemas.ts';
import { idParam } from './schemas.ts';

const time = { type: 'string', format: 'date-time' } as const;
const nullable = (t: string) => ({ type: [t, 'null'] });

/** The answer of GET /admin/companies/{id}/contacts/{phone}. */
export const contactViewSchema = {
  type: 'object',
  properties: {
    contact_id: { type: 'integer' },
    phone: { type: 'string' },
    first_name: nullable('string'),
    last_name: nullable('string'),
    variables: { type: 'object', additionalProperties: true },
    opted_out: { type: 'boolean' },
    opt_out_source: { type: ['string', 'null'], description: "where the opt-out state came from: 'keyword', 'operator', 'import', 'console'" },
    opt_out_at: { type: ['string', 'null'], format: 'date-time', description: 'when the opt-out state last changed' },
    created_at: time,
    updated_at: time,
    inbound: {
      type: 'array', description: `inbound messages, newest first (at most ${CONTACT_VIEW_LIMIT})`,
      items: { type: 'object', properties: { provider_message_id: { type: 'string' }, type: { type: 'string' }, text: nullable('string'), payload: nullable('string'), received_at: time } },
    },
    messages: {
      type: 'array', description: `messages sent to the contact, newest first (at most ${CONTACT_VIEW_LIMIT})`,
      items: {
        type: 'object',
        properties: {
          message_id: { type: 'string' }, batch_id: { type: 'string' }, kind: { type: 'string' }, status: { type: 'string' },
          reason: nullable('string'), error: nullable('string'), error_code: nullable('string'), provider_message_id: nullable('string'),
          sent_at: { type: ['string', 'null'], format: 'date-time' }, delivered_at: { type: ['string', 'null'], format: 'date-time' },
          read_at: { type: ['string', 'null'], format: 'date-time' }, failed_at: { type: ['string', 'null'], format: 'date-time' }, created_at: time,
        },
      },
    },
  },
} as const;

export function registerContactRoutes(app: FastifyInstance, deps: AppDeps): void {
  const db = deps.database.db;
  app.put<{ Params: { company_id: number }; Body: { contacts: ImportRow[] } }>('/admin/companies/:company_id/contacts', {
    bodyLimit: 16 * 1024 * 1024,
    schema: {
      tags: ['operator: contacts'], summary: 'Create or update contacts (at most 10,000 a request)', params: idParam('company_id'),
      body: {
        type: 'object', required: ['contacts'],
        properties: {
          contacts: {
            type: 'array', maxItems: 10_000,
            items: {
              type: 'object', required: ['phone'],
              properties: {
                phone: { type: 'string', maxLength: 64 },
                first_name: { type: ['string', 'null'], maxLength: 255 },
                last_name: { type: ['string', 'null'], maxLength: 255 },
                variables: { type: ['object', 'null'] },
                opted_out: { type: ['boolean', 'null'] },
              },
            },
          },
        },
      },
    },
  }, async (request) => {
    const company = await getCompany(db, request.params.company_id);
    const result = await db.transaction().execute((trx) => importContacts(trx, company.company_id, company.default_country, request.body.contacts));
    await recordAudit(db, { actor: 'admin', action: 'contacts.import', target: `company:${company.company_id}`, company_id: company.company_id, details: result });
    return result;
  });

  app.get<{ Params: { company_id: number; phone: string } }>('/admin/companies/:company_id/contacts/:phone', {
    schema: {
      tags: ['operator: contacts'], operationId: 'get_contact',
      summary: "One contact: fields, opt-out state (source, time), inbound messages and messages sent",
      params: {
        type: 'object', required: ['company_id', 'phone'],
        properties: { company_id: idParam('company_id').properties.company_id, phone: { type: 'string', minLength: 1, maxLength: 64, description: "E.164 or national (the company's default country)" } },
      },
      response: { 200: contactViewSchema, 404: { description: 'Unknown company or contact', ...detailResponse } },
    },
  }, async (request) => {
    const company = await getCompany(db, request.params.company_id);
    return getContactView(db, company.company_id, company.default_country, request.params.phone);
  });
}
