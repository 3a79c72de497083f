/** Operator API: contact import (operator-api.md PUT /admin/companies/{id}/contacts, at most 10,000). */
import type { FastifyInstance } from 'fastify';
import { getCompany } from '../../domain/companies.ts';
import { importContacts, type ImportRow } from '../../domain/contacts.ts';
import { recordAudit } from '../../domain/audit.ts';
import type { AppDeps } from '../deps.ts';
import { idParam } from './schemas.ts';

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
}
