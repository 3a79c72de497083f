/** Operator API: automations and campaigns with their templates (operator-api.md). */
import type { FastifyInstance } from 'fastify';
import { createAutomation, createCampaign, updateAutomation } from '../../domain/automations.ts';
import { DomainError } from '../../domain/errors.ts';
import { checkTemplate, normaliseTemplate, templateSchema, type Template } from '../../domain/templates.ts';
import { recordAudit } from '../../domain/audit.ts';
import type { AppDeps } from '../deps.ts';
import { idParam } from './schemas.ts';

function template(raw: unknown): Template {
  const t = normaliseTemplate(raw as Template);
  const problems = checkTemplate(t);
  if (problems.length) throw new DomainError(422, `Invalid template: ${problems.join('; ')}`);
  return t;
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
    const automation = await createAutomation(db, request.params.company_id, { name: b.name, type: b.type, active: b.active, template: template(b.template) });
    deps.automationLookups.forget();
    await recordAudit(db, { actor: 'admin', action: 'automation.create', target: `automation:${automation.automation_id}`, company_id: automation.company_id, details: { name: b.name, type: b.type, active: b.active } });
    return reply.code(201).send(automation);
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
    const automation = await updateAutomation(db, request.params.automation_id, {
      name: b.name, active: b.active, template: b.template === undefined ? undefined : template(b.template),
    }).finally(() => deps.automationLookups.forget());
    await recordAudit(db, { actor: 'admin', action: 'automation.update', target: `automation:${automation.automation_id}`, company_id: automation.company_id, details: { name: b.name, active: b.active, template_changed: b.template !== undefined } });
    return automation;
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
    const campaign = await createCampaign(db, request.params.company_id, { name: request.body.name, template: template(request.body.template) });
    await recordAudit(db, { actor: 'admin', action: 'campaign.create', target: `campaign:${campaign.campaign_id}`, company_id: campaign.company_id, details: { name: campaign.name } });
    return reply.code(201).send(campaign);
  });
}
