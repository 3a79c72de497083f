/**
 * Operator API: automations and campaigns with their templates (operator-api.md). Templates are checked
 * when saved (issue 13, src/domain/templates.ts): a problem is `422 {"detail":[{type:"template_error",
 * loc:["body","template",...], msg}]}` (the admin error shape; the message has the line and column),
 * nothing stored. A stored template's answer (201/200) carries `warnings`: one per variable the
 * template reads that no contact of the company has (first_name, last_name and phone always exist);
 * such a variable renders empty.
 */
import type { FastifyInstance } from 'fastify';
import { createAutomation, createCampaign, updateAutomation } from '../../domain/automations.ts';
import { ALWAYS_KNOWN, checkTemplate, normaliseTemplate, templateSchema, type Template } from '../../domain/templates.ts';
import { recordAudit } from '../../domain/audit.ts';
import type { Db } from '../../db/database.ts';
import { knownVariableNames } from '../../db/template-variables.ts';
import type { AppDeps } from '../deps.ts';
import { AdminValidationError } from './errors.ts';
import { idParam } from './schemas.ts';

/** The normalised template, or 422 (AdminValidationError) with every problem found. */
export function template(raw: unknown): { template: Template; reads: string[] } {
  const t = normaliseTemplate(raw as Template);
  const { problems, reads } = checkTemplate(t);
  if (problems.length) throw new AdminValidationError(problems.map((p) => ({ type: 'template_error', loc: ['body', 'template', ...p.loc], msg: p.msg })));
  return { template: t, reads };
}

/** Warnings for the variables `reads` names that no contact of the company has. */
export async function variableWarnings(db: Db, companyId: number, reads: string[]): Promise<string[]> {
  const names = reads.filter((n) => !ALWAYS_KNOWN.has(n));
  const known = await knownVariableNames(db, companyId, names);
  return names.filter((n) => !known.has(n)).map((n) => `no contact of this company has the variable ${n}: it renders empty`);
}

export function registerSourceRoutes(app: FastifyInstance, deps: AppDeps): void {
  const db = deps.database.db;

  app.post<{ Params: { company_id: number }; Body: { name: string; type: string; active: boolean; template: unknown } }>('/admin/companies/:company_id/automations', {
    schema: {
      tags: ['operator: automations'], summary: 'Create an automation', params: idParam('company_id'),
      body: {
        type: 'object', required: ['name', 'type', 'active', 'template'],
        properties: {
          name: { type: 'string', minLength: 1, maxLength: 255 },
          type: { type: 'string', minLength: 1, maxLength: 32 },
          active: { type: 'boolean' },
          template: templateSchema,
        },
      },
    },
  }, async (request, reply) => {
    const b = request.body;
    const checked = template(b.template);
    const automation = await createAutomation(db, request.params.company_id, { name: b.name, type: b.type, active: b.active, template: checked.template });
    deps.automationLookups.forget();
    await recordAudit(db, { actor: 'admin', action: 'automation.create', target: `automation:${automation.automation_id}`, company_id: automation.company_id, details: { name: b.name, type: b.type, active: b.active } });
    return reply.code(201).send({ ...automation, warnings: await variableWarnings(db, automation.company_id, checked.reads) });
  });

  app.patch<{ Params: { automation_id: number }; Body: { name?: string; active?: boolean; template?: unknown } }>('/admin/automations/:automation_id', {
    schema: {
      tags: ['operator: automations'], summary: 'Change an automation', params: idParam('automation_id'),
      body: {
        type: 'object',
        properties: { name: { type: 'string', minLength: 1, maxLength: 255 }, active: { type: 'boolean' }, template: templateSchema },
      },
    },
  }, async (request) => {
    const b = request.body;
    const checked = b.template === undefined ? undefined : template(b.template);
    const automation = await updateAutomation(db, request.params.automation_id, {
      name: b.name, active: b.active, template: checked?.template,
    }).finally(() => deps.automationLookups.forget());
    await recordAudit(db, { actor: 'admin', action: 'automation.update', target: `automation:${automation.automation_id}`, company_id: automation.company_id, details: { name: b.name, active: b.active, template_changed: b.template !== undefined } });
    return { ...automation, warnings: checked ? await variableWarnings(db, automation.company_id, checked.reads) : [] };
  });

  app.post<{ Params: { company_id: number }; Body: { name: string; template: unknown } }>('/admin/companies/:company_id/campaigns', {
    schema: {
      tags: ['operator: campaigns'], summary: 'Create a campaign', params: idParam('company_id'),
      body: {
        type: 'object', required: ['name', 'template'],
        properties: { name: { type: 'string', minLength: 1, maxLength: 255 }, template: templateSchema },
      },
    },
  }, async (request, reply) => {
    const checked = template(request.body.template);
    const campaign = await createCampaign(db, request.params.company_id, { name: request.body.name, template: checked.template });
    await recordAudit(db, { actor: 'admin', action: 'campaign.create', target: `campaign:${campaign.campaign_id}`, company_id: campaign.company_id, details: { name: campaign.name } });
    return reply.code(201).send({ ...campaign, warnings: await variableWarnings(db, campaign.company_id, checked.reads) });
  });
}
