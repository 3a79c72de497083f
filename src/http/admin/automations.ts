/**
 * Operator API: automations (docs/operator-api.md), the sources that POST /api/automations/send triggers.
 * The template rules, `expire_after` and the routes every source has are in sources.ts.
 *
 * | route | answers |
 * |---|---|
 * | POST /admin/companies/{company_id}/automations | 201 `Automation` with `warnings`; 401; 404 company; 422 |
 * | PATCH /admin/automations/{automation_id} | 200 `Automation` with `warnings`; 401; 404; 422 |
 * | GET /admin/companies/{company_id}/automations | 200 `Source[]` (newest first); 401; 404 company; 422 |
 * | GET /admin/automations/{automation_id} | 200 `Source`; 401; 404; 422 |
 * | POST /admin/automations/{automation_id}/preview | 200 `Preview`; 401; 404; 422 |
 * | POST /admin/automations/{automation_id}/test-send `{phone}` | 202 `{batch_id}`; 401; 404 (an archived one too); 422 |
 * | DELETE /admin/automations/{automation_id} | 200 `Source` with `archived_at` (archived: 4.3 answers it as inactive); 401; 404; 422 |
 * | POST /admin/automations/{automation_id}/restore | 200 `Source`, `archived_at` null; 401; 404; 422 |
 */
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { OPERATOR } from '../../domain/actor.ts';
import { changeAutomation, defineAutomation, findSource } from '../../domain/automations.ts';
import type { Template } from '../../domain/templates.ts';
import type { AppDeps } from '../deps.ts';
import { addComponents, adminErrors, component, exampleOf, idParams, invalid, iso, notFound, ok, ref, TIME_EXAMPLE } from './components.ts';
import {
  checkWhatsappMapping, expireAfter, expireAfterInput, expireAfterShown, registerSourceToolRoutes, sourceName, template, TemplateComponent, templateProblem,
  templateWarnings, variableWarnings,
} from './sources.ts';

/** An automation, as created or changed (with the template's warnings). */
export const Automation = component('Automation', Type.Object({
  automation_id: Type.Integer(),
  company_id: Type.Integer(),
  name: Type.String(),
  type: Type.String({ description: '`api`: triggered through POST /api/automations/send' }),
  active: Type.Boolean(),
  template: ref(TemplateComponent),
  expire_after: expireAfterShown,
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Type.String({ format: 'date-time' }),
  archived_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'when it was archived (DELETE /admin/automations/{id}): it cannot be triggered; null: not archived' }),
  warnings: templateWarnings,
}), {
  automation_id: 31, company_id: 12, name: 'Order shipped', type: 'api', active: true, template: exampleOf(TemplateComponent),
  expire_after: null, created_at: TIME_EXAMPLE, updated_at: TIME_EXAMPLE, archived_at: null, warnings: [],
});

/** The answer fields of an automation row (times as RFC 3339). */
function automationJson(a: { automation_id: number; company_id: number; name: string; type: string; active: boolean; template: Template; expire_after: string | null; created_at: Date; updated_at: Date; archived_at: Date | null }) {
  return { automation_id: a.automation_id, company_id: a.company_id, name: a.name, type: a.type, active: a.active, template: a.template, expire_after: a.expire_after ?? null, created_at: iso(a.created_at), updated_at: iso(a.updated_at), archived_at: a.archived_at ? iso(a.archived_at) : null };
}

/** Registers the routes of the module comment. */
export function registerAutomationRoutes(app: FastifyInstance, deps: AppDeps): void {
  const db = deps.database.db;
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  addComponents(app, [TemplateComponent, Automation]);
  const companyParams = idParams('company_id', 'the company', 12);
  const companyNotFound = notFound('Company not found');

  r.post('/admin/companies/:company_id/automations', {
    schema: {
      tags: ['operator: automations'], operationId: 'create_automation', summary: 'Create an automation (the template is checked: 422 with line and column)',
      params: companyParams,
      body: Type.Object({
        name: sourceName,
        type: Type.String({ minLength: 1, maxLength: 32, description: '`api` to trigger it through POST /api/automations/send' }),
        active: Type.Boolean(),
        template: ref(TemplateComponent),
        expire_after: expireAfterInput('null'),
      }, { examples: [{ name: 'Order shipped', type: 'api', active: true, template: { body: 'Hi {{ first_name }}, order {{ order_id }} has shipped.' }, expire_after: '2h' }] }),
      response: {
        201: ok('The automation, with `warnings` about variables no contact has', ref(Automation), exampleOf(Automation)),
        ...adminErrors, 404: companyNotFound, 422: invalid(templateProblem),
      },
    },
  }, async (request, reply) => {
    const b = request.body;
    const checked = template(b.template);
    const expire = expireAfter(b.expire_after);
    await checkWhatsappMapping(db, request.params.company_id, checked.template);
    const automation = await defineAutomation(deps, OPERATOR, request.params.company_id, { name: b.name, type: b.type, active: b.active, template: checked.template, expire_after: expire });
    return reply.code(201).send({ ...automationJson(automation), warnings: await variableWarnings(db, automation.company_id, checked.reads) });
  });

  r.patch('/admin/automations/:automation_id', {
    schema: {
      tags: ['operator: automations'], operationId: 'update_automation', summary: 'Change an automation (only the fields given; a template is checked as at create)',
      params: idParams('automation_id', 'the automation', 31),
      body: Type.Object({
        name: Type.Optional(sourceName), active: Type.Optional(Type.Boolean()), template: Type.Optional(ref(TemplateComponent)),
        expire_after: expireAfterInput('unchanged'),
      }, { examples: [{ active: false }] }),
      response: {
        200: ok('The automation as changed; `warnings` for a new template, else []', ref(Automation), exampleOf(Automation)),
        ...adminErrors, 404: notFound('Automation not found'), 422: invalid(templateProblem),
      },
    },
  }, async (request) => {
    const b = request.body;
    const checked = b.template === undefined ? undefined : template(b.template);
    const expire = expireAfter(b.expire_after);
    if (checked) {
      const current = await findSource(db, 'automation', request.params.automation_id, null);
      await checkWhatsappMapping(db, current.company_id, checked.template);
    }
    const automation = await changeAutomation(deps, OPERATOR, request.params.automation_id, {
      name: b.name, active: b.active, template: checked?.template, expire_after: expire,
    });
    return { ...automationJson(automation), warnings: checked ? await variableWarnings(db, automation.company_id, checked.reads) : [] };
  });

  registerSourceToolRoutes(app, deps, 'automation');
}
