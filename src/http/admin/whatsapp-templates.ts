/**
 * Operator API: a company's WhatsApp template catalogue (docs/whatsapp.md "Template catalogue";
 * src/domain/whatsapp-templates.ts).
 *
 * | route | answers |
 * |---|---|
 * | POST /admin/companies/{company_id}/whatsapp/templates/sync | 200 `{templates: N}`; 401; 404; 409 not WhatsApp / no waba_id; 422; 502 Meta refused (nothing changed) |
 * | GET /admin/companies/{company_id}/whatsapp/templates | 200 `{templates: WhatsappTemplate[]}`; 401; 404; 422 |
 * | POST /admin/companies/{company_id}/whatsapp/templates | 201 `WhatsappTemplate`; 401; 404; 409; 422; 502 |
 *
 * Meta's template endpoints are called through AppDeps.catalogue (built once by src/service.ts over the
 * one outbound client: network-guarded, bounded by DELIVERY_TIMEOUT). The sync and the submit are domain commands
 * (`syncCatalogue`, `submitCatalogueTemplate`) that record their own audit entries as the operator.
 */
import type { FastifyInstance } from 'fastify';
import { Type, type Static } from 'typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { OPERATOR } from '../../domain/actor.ts';
import {
  listCatalogue, submitCatalogueTemplate, syncCatalogue, TemplateDataError, type StoredTemplate,
} from '../../domain/whatsapp-templates.ts';
import type { AppDeps } from '../deps.ts';
import {
  addComponents, adminErrors, component, conflict, exampleOf, freeObject, idParams, invalid, invalidInput, iso, notFound, ok, ref, TIME_EXAMPLE,
} from './components.ts';

const nullableString = (description: string) => Type.Union([Type.String(), Type.Null()], { description });

/** A template of the catalogue as the operator API shows it. */
export const WhatsappTemplate = component('WhatsappTemplate', Type.Object({
  template_id: Type.String({ description: "Meta's template id" }),
  name: Type.String(),
  language: Type.String({ description: 'the language code, e.g. `en_US`' }),
  status: Type.String({ description: 'as Meta spells it: APPROVED, PENDING, REJECTED, PAUSED, DISABLED, ...' }),
  category: nullableString('MARKETING, UTILITY or AUTHENTICATION, as Meta last said'),
  quality_score: nullableString('GREEN, YELLOW, RED or UNKNOWN, as Meta last said; null when not known'),
  rejected_reason: nullableString("Meta's reason for a rejection; null when none"),
  parameters: Type.Object({
    header: Type.Union([Type.Integer({ minimum: 0, maximum: 1 }), Type.String()], { description: 'placeholders of a text header (0 or 1), or the media kind: `image`, `video`, `document`' }),
    body: Type.Integer({ minimum: 0, description: 'distinct {{n}} placeholders of the body' }),
    buttons: Type.Array(Type.Integer({ minimum: 0 }), { description: 'per button, in order: placeholders of its URL (0 for other buttons)' }),
  }),
  components: Type.Array(freeObject(), { description: "Meta's components, as Meta sent them" }),
  synced_at: Type.String({ format: 'date-time', description: 'when this copy was last read from (or stored after submitting to) Meta' }),
}), {
  template_id: '1254897365498752', name: 'order_shipped', language: 'en_US', status: 'APPROVED', category: 'UTILITY',
  quality_score: 'GREEN', rejected_reason: null, parameters: { header: 'image', body: 2, buttons: [1] },
  components: [
    { type: 'HEADER', format: 'IMAGE' },
    { type: 'BODY', text: 'Hi {{1}}, your order {{2}} has shipped.' },
    { type: 'BUTTONS', buttons: [{ type: 'URL', text: 'Track', url: 'https://shop.example/track/{{1}}' }] },
  ],
  synced_at: TIME_EXAMPLE,
});

/** The answer of a sync. */
export const TemplateSyncAnswer = component('TemplateSyncAnswer', Type.Object({
  templates: Type.Integer({ description: 'how many templates the catalogue has now' }),
}), { templates: 12 });

/** The answer shape of a stored template. */
export function templateJson(t: StoredTemplate): Static<typeof WhatsappTemplate> {
  return {
    template_id: t.template_id, name: t.name, language: t.language, status: t.status, category: t.category,
    quality_score: t.quality_score, rejected_reason: t.rejected_reason, parameters: t.parameters,
    components: t.components as Record<string, unknown>[], synced_at: iso(t.synced_at),
  };
}

const companyNotFound = notFound('Company not found');
const notWhatsapp = conflict('The channel is not WhatsApp, or has no waba_id', "the company's WhatsApp channel has no waba_id (PUT /admin/companies/{company_id}/channel)");
const metaRefusedAnswer = ok('Meta refused or could not be reached, or sent data that cannot be read; nothing changed', Type.Object({ detail: Type.String() }),
  { detail: 'Meta answered HTTP 401, error 190: Invalid OAuth access token - Cannot parse access token' });
const badCompanyId = { type: 'type', loc: ['path', 'company_id'], msg: 'must be integer' };

/** Registers the routes of the module comment. */
export function registerWhatsappTemplateRoutes(app: FastifyInstance, deps: AppDeps): void {
  const db = deps.database.db;
  const tags = ['operator: whatsapp'];
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  addComponents(app, [WhatsappTemplate, TemplateSyncAnswer]);
  const catalogue = deps.catalogue;
  const companyParams = idParams('company_id', 'the company', 12);

  r.post('/admin/companies/:company_id/whatsapp/templates/sync', {
    schema: {
      tags, operationId: 'sync_whatsapp_templates', params: companyParams,
      summary: "Replace the company's template catalogue with Meta's templates (all pages)",
      response: {
        200: ok('The catalogue as synced', ref(TemplateSyncAnswer), exampleOf(TemplateSyncAnswer)),
        ...adminErrors, 404: companyNotFound, 409: notWhatsapp, 422: invalid(badCompanyId), 502: metaRefusedAnswer,
      },
    },
  }, async (request) => {
    return { templates: await syncCatalogue(db, catalogue, OPERATOR, request.params.company_id) };
  });

  r.get('/admin/companies/:company_id/whatsapp/templates', {
    schema: {
      tags, operationId: 'list_whatsapp_templates', params: companyParams,
      summary: "The company's template catalogue (as last synced), by name then language",
      response: {
        200: ok('The catalogue', Type.Object({ templates: Type.Array(ref(WhatsappTemplate)) }), { templates: [exampleOf(WhatsappTemplate)] }),
        ...adminErrors, 404: companyNotFound, 422: invalid(badCompanyId),
      },
    },
  }, async (request) => ({ templates: (await listCatalogue(db, request.params.company_id)).map(templateJson) }));

  r.post('/admin/companies/:company_id/whatsapp/templates', {
    schema: {
      tags, operationId: 'submit_whatsapp_template', params: companyParams,
      summary: "Submit a template to Meta for review; Meta's answer (id, status, category) is stored in the catalogue",
      body: Type.Object({
        name: Type.String({ pattern: '^[a-z0-9_]{1,512}$', description: "lower-case letters, digits and underscores (Meta's rule)" }),
        language: Type.String({ pattern: '^[a-z]{2,3}(_[A-Za-z0-9]{2,8})?$', description: 'a language code Meta knows, e.g. `en` or `en_US`' }),
        category: Type.Union([Type.Literal('MARKETING'), Type.Literal('UTILITY'), Type.Literal('AUTHENTICATION')]),
        components: Type.Array(freeObject(), { minItems: 1, maxItems: 10, description: "Meta's components (HEADER, BODY, FOOTER, BUTTONS)" }),
      }, {
        examples: [{
          name: 'order_shipped', language: 'en_US', category: 'UTILITY',
          components: [{ type: 'BODY', text: 'Hi {{1}}, your order {{2}} has shipped.', example: { body_text: [['Ada', 'A-1']] } }],
        }],
      }),
      response: {
        201: ok('The template as stored (status as Meta answered, usually PENDING)', ref(WhatsappTemplate), { ...exampleOf(WhatsappTemplate), status: 'PENDING', quality_score: null }),
        ...adminErrors, 404: companyNotFound, 409: notWhatsapp,
        422: invalid({ type: 'value_error', loc: ['body', 'components', 1, 'text'], msg: 'components[1].text is not a string' }),
        502: metaRefusedAnswer,
      },
    },
  }, async (request, reply) => {
    const companyId = request.params.company_id;
    let stored: StoredTemplate;
    try {
      stored = await submitCatalogueTemplate(db, catalogue, OPERATOR, companyId, request.body);
    } catch (err) {
      if (err instanceof TemplateDataError) {
        const path = err.path.map((p, i) => (typeof p === 'number' ? `[${p}]` : i === 0 ? p : `.${p}`)).join('');
        throw invalidInput(['body', ...err.path], `${path} ${err.message}`);
      }
      throw err;
    }
    return reply.code(201).send(templateJson(stored));
  });
}
