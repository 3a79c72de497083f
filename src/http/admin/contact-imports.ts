/**
 * Operator API: CSV imports of a company's contacts, run in the background (docs/operator-api.md; the
 * rules of the console's import page, src/domain/contact-imports.ts). The JSON import is
 * PUT /admin/companies/{company_id}/contacts (contacts.ts).
 *
 * | route | answers |
 * |---|---|
 * | POST /admin/companies/{company_id}/contact-imports (text/csv, at most 20 MiB) | 202 `ContactImportJob`; 401; 404; 413; 422 |
 * | GET /admin/companies/{company_id}/contact-imports/{import_id} | 200 `ContactImportJob`; 401; 404; 422 |
 *
 * The imports have a path of their own (until then `…/contacts/imports`, which made
 * `…/contacts/{phone}/consent` ambiguous for redocly's `no-ambiguous-paths`; docs/operator-api.md).
 * The start is the command `createImport`, run as the operator.
 */
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { OPERATOR } from '../../domain/actor.ts';
import { getCompany } from '../../domain/companies.ts';
import { createImport, getImport, MAX_IMPORT_BYTES, type ContactImport } from '../../domain/contact-imports.ts';
import { DomainError } from '../../domain/errors.ts';
import type { AppDeps } from '../deps.ts';
import { addComponents, adminErrors, component, Detail, exampleOf, idParams, invalid, invalidInput, iso, notFound, ok, ref, rowId, TIME_EXAMPLE } from './components.ts';

const time = Type.String({ format: 'date-time' });
const nullableTime = (description?: string) => Type.Union([time, Type.Null()], description ? { description } : {});
const nullableString = (description?: string) => Type.Union([Type.String(), Type.Null()], description ? { description } : {});
const PHONE = '+4915112345678';

/** A CSV import running as a background job. */
export const ContactImportJob = component('ContactImportJob', Type.Object({
  import_id: Type.Integer(),
  filename: nullableString(),
  delimiter: Type.String({ description: 'the delimiter detected from the header row' }),
  status: Type.Union([Type.Literal('queued'), Type.Literal('running'), Type.Literal('completed'), Type.Literal('failed')]),
  total: Type.Integer({ minimum: 0, description: 'data rows in the file' }),
  processed: Type.Integer({ minimum: 0, description: 'rows done so far' }),
  created: Type.Integer({ minimum: 0 }), updated: Type.Integer({ minimum: 0 }),
  failed: Type.Integer({ minimum: 0, description: 'rows not imported (see errors)' }),
  errors: Type.Array(Type.Object({ line: Type.Integer({ description: 'line of the file (1 is the header)' }), error: Type.String() }), { description: 'the first 100 rows not imported' }),
  error: nullableString('why the whole import failed'),
  created_at: time,
  finished_at: nullableTime(),
}), {
  import_id: 17, filename: 'customers.csv', delimiter: ';', status: 'running', total: 25000, processed: 12000, created: 11890, updated: 100, failed: 10,
  errors: [{ line: 7, error: '"12" is not a valid phone number' }], error: null, created_at: TIME_EXAMPLE, finished_at: null,
});

const companyParams = idParams('company_id', 'the company', 12);

function importOut(i: ContactImport) {
  return { ...i, created_at: iso(new Date(i.created_at)), finished_at: i.finished_at ? iso(new Date(i.finished_at)) : null };
}

/** Registers the routes of the module comment. */
export function registerContactImportRoutes(app: FastifyInstance, deps: AppDeps): void {
  const db = deps.database.db;
  const tags = ['operator: contacts'];
  addComponents(app, [ContactImportJob]);
  const r = app.withTypeProvider<TypeBoxTypeProvider>();

  // The CSV upload needs its own body parser: registered in a scope of its own.
  void app.register(async (scope) => {
    // The bytes travel as a latin1 string (one character per byte, so the UTF-8 check sees the file as
    // sent): the admin scope's hooks and validator expect JSON-like data, not a Buffer.
    scope.addContentTypeParser(['text/csv', 'text/plain'], { parseAs: 'buffer', bodyLimit: MAX_IMPORT_BYTES }, (_req, body, done) => done(null, (body as Buffer).toString('latin1')));
    const s = scope.withTypeProvider<TypeBoxTypeProvider>();
    s.post('/admin/companies/:company_id/contact-imports', {
      bodyLimit: MAX_IMPORT_BYTES,
      schema: {
        tags, operationId: 'start_contact_import', summary: 'Import a CSV of contacts in the background (progress at GET …/contact-imports/{import_id})',
        description: `Body: the CSV file (\`Content-Type: text/csv\`, UTF-8, at most ${MAX_IMPORT_BYTES / 1024 / 1024} MiB). Header row with a \`phone\` column; \`first_name\`, \`last_name\`, \`opted_out\`; other columns become variables; delimiter \`,\` \`;\` tab or \`|\` detected from the header. A file that cannot be read is refused (422) and nothing is written; rows that cannot be imported are reported with their line numbers.`,
        params: companyParams,
        querystring: Type.Object({ filename: Type.Optional(Type.String({ maxLength: 255, description: 'a name to show for the file' })) }),
        consumes: ['text/csv'],
        body: Type.String({ description: 'the CSV file', examples: [`phone;first_name;tier\n${PHONE};Ada;gold\n`] }),
        response: {
          202: ok('Accepted: the import is queued', ref(ContactImportJob), { ...exampleOf(ContactImportJob), status: 'queued', processed: 0, created: 0, updated: 0, failed: 0, errors: [] }),
          ...adminErrors,
          404: notFound('Company not found'),
          413: ok(`The file is larger than ${MAX_IMPORT_BYTES / 1024 / 1024} MiB; nothing written`, ref(Detail), { detail: 'Request body too large' }),
          422: invalid({ type: 'value_error', loc: ['body'], msg: 'The CSV header has no "phone" column (columns: mobile;name). The columns are separated by commas, semicolons, tabs or |.' }),
        },
      },
    }, async (request, reply) => {
      const company = await getCompany(db, request.params.company_id);
      const bytes = Buffer.from(request.body, 'latin1');
      try {
        const imp = await createImport(db, deps.jobs, OPERATOR, company.company_id, { bytes, filename: request.query.filename ?? null }, new Date(deps.clock.now()));
        return reply.code(202).send(importOut(imp));
      } catch (err) {
        if (err instanceof DomainError && err.status === 400) throw invalidInput(['body'], err.detail);
        throw err;
      }
    });
  });

  r.get('/admin/companies/:company_id/contact-imports/:import_id', {
    schema: {
      tags, operationId: 'get_contact_import', summary: 'Progress of a CSV import',
      params: Type.Object({ company_id: rowId('the company', 12), import_id: rowId('the import', 17) }),
      response: {
        200: ok('The import', ref(ContactImportJob), exampleOf(ContactImportJob)),
        ...adminErrors,
        404: notFound('Import not found', 'Unknown company (`Company not found`), or no such import of this company (`Import not found`)'),
        422: invalid({ type: 'type', loc: ['path', 'import_id'], msg: 'must be integer' }),
      },
    },
  }, async (request) => {
    const company = await getCompany(db, request.params.company_id);
    return importOut(await getImport(db, company.company_id, request.params.import_id));
  });
}
