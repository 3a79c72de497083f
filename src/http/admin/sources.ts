/**
 * Operator API: automations and campaigns with their templates (docs/operator-api.md). Templates are checked
 * when saved (src/domain/templates.ts): a problem is `422 {"detail":[{type:"template_error",
 * loc:["body","template",...], msg}]}` (the admin error shape; the message has the line and column),
 * nothing stored. A stored template's answer (201/200) carries `warnings`: one per variable the
 * template reads that no contact of the company has (first_name, last_name and phone always exist);
 * such a variable renders empty.
 *
 * | route | answers |
 * |---|---|
 * | POST /admin/companies/{company_id}/automations | 201 `Automation` with `warnings`; 401; 404 company; 422 |
 * | PATCH /admin/automations/{automation_id} | 200 `Automation` with `warnings`; 401; 404; 422 |
 * | POST /admin/companies/{company_id}/campaigns | 201 `Campaign` with `warnings`; 401; 404 company; 422 |
 *
 * For a company whose channel is WhatsApp, a template (on create, or when it changes) must also map to
 * an APPROVED template of the company's catalogue with matching parameters (docs/whatsapp.md "Sources
 * must map to an approved template"; src/domain/whatsapp-templates.ts): otherwise 422 `template_error`
 * items naming the problem. `expire_after` (a duration such as `24h`, or null) says how long the
 * source's messages stay worth sending: default null for automations, `24h` for campaigns.
 */
import type { FastifyInstance } from 'fastify';
import { Type, type Static } from 'typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { createAutomation, createCampaign, updateAutomation } from '../../domain/automations.ts';
import { ALWAYS_KNOWN, checkTemplate, normaliseTemplate, templateSchema, type Template } from '../../domain/templates.ts';
import { recordAudit } from '../../domain/audit.ts';
import { DEFAULT_CAMPAIGN_EXPIRE_AFTER, EXPIRE_AFTER_PATTERN, expireAfterProblem } from '../../domain/expiry.ts';
import { findSource } from '../../domain/source-tools.ts';
import { whatsappMappingProblems } from '../../domain/whatsapp-templates.ts';
import type { Db } from '../../db/database.ts';
import { knownVariableNames } from '../../db/template-variables.ts';
import type { AppDeps } from '../deps.ts';
import { AdminValidationError } from './errors.ts';
import { addComponents, adminErrors, component, exampleOf, idParams, invalid, invalidInput, iso, notFound, ok, ref, TIME_EXAMPLE } from './components.ts';

/** A template as requests give it (header and buttons optional) and answers show it (normalised). */
type TemplateInput = Omit<Template, 'header' | 'buttons'> & Partial<Pick<Template, 'header' | 'buttons'>>;

/** The message template of an automation or campaign (Liquid in texts; checked when saved). */
export const TemplateComponent = component('Template', Type.Unsafe<TemplateInput>({ ...templateSchema }), {
  header: { type: 'text', text: 'Hi {{ first_name }}' },
  body: 'Your order {{ order_id }} has shipped. Reply STOP to opt out.',
  buttons: [{ type: 'url', text: 'Track it', url: 'https://acme-shoes.example/track/{{ order_id }}' }],
});

const warnings = Type.Array(Type.String(), {
  description: 'one per variable the template reads that no contact of the company has (it renders empty); [] when none',
  examples: [['no contact of this company has the variable order_id: it renders empty']],
});

/** `expire_after` as answers show it. */
const expireAfterShown = Type.Union([Type.String(), Type.Null()], { description: 'how long its messages stay worth sending (a duration such as `24h`); null: forever. A message not handed to the provider by then ends skipped, reason `expired`' });

/** `expire_after` as requests give it (checked: a positive duration with its unit, or null). */
export const expireAfterInput = (dflt: string) => Type.Optional(Type.Union([
  Type.String({ pattern: EXPIRE_AFTER_PATTERN, maxLength: 16, description: 'a duration: a number and a unit (ms, s, m, h, d), e.g. `30m`, `24h`, `2d`' }),
  Type.Null(),
], { description: `how long its messages stay worth sending; null: forever (default ${dflt})` }));

/** The stored expire_after, or 422 at `body.expire_after`. */
export function expireAfter(value: string | null | undefined): string | null | undefined {
  if (value === undefined) return undefined;
  const problem = expireAfterProblem(value);
  if (problem) throw invalidInput(['body', 'expire_after'], problem, 'value_error', value);
  return value;
}

/**
 * 422 (`template_error` items at `body.template...`) when the company's channel is WhatsApp and `t`
 * does not map to an approved template of its catalogue (src/domain/whatsapp-templates.ts).
 */
export async function checkWhatsappMapping(db: Db, companyId: number, t: Template): Promise<void> {
  const problems = await whatsappMappingProblems(db, companyId, t);
  if (problems.length) throw new AdminValidationError(problems.map((p) => ({ type: 'template_error', loc: ['body', 'template', ...p.loc], msg: p.msg })));
}

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
  warnings,
}), {
  automation_id: 31, company_id: 12, name: 'Order shipped', type: 'api', active: true, template: exampleOf(TemplateComponent),
  expire_after: null, created_at: TIME_EXAMPLE, updated_at: TIME_EXAMPLE, warnings: [],
});

/** A campaign, as created (with the template's warnings). */
export const Campaign = component('Campaign', Type.Object({
  campaign_id: Type.Integer(),
  company_id: Type.Integer(),
  name: Type.String(),
  template: ref(TemplateComponent),
  expire_after: expireAfterShown,
  ignore_frequency_cap: Type.Boolean({ description: "true: this campaign's messages are not held to the company's frequency cap (they still count toward it)" }),
  created_at: Type.String({ format: 'date-time' }),
  warnings,
}), { campaign_id: 8, company_id: 12, name: 'Spring sale', template: { header: { type: 'none' }, body: 'Hi {{ first_name }}, 20 % off all shoes this week.', buttons: [] }, expire_after: '24h', ignore_frequency_cap: false, created_at: TIME_EXAMPLE, warnings: [] });

/** The 422 example of a template that does not parse. */
export const templateProblem: Parameters<typeof invalid>[0] = {
  type: 'template_error', loc: ['body', 'template', 'body'], msg: 'undefined filter: shout (line 1, column 7)',
};

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

/** The answer fields of an automation row (times as RFC 3339). */
function automationJson(a: { automation_id: number; company_id: number; name: string; type: string; active: boolean; template: Template; expire_after: string | null; created_at: Date; updated_at: Date }) {
  return { automation_id: a.automation_id, company_id: a.company_id, name: a.name, type: a.type, active: a.active, template: a.template, expire_after: a.expire_after ?? null, created_at: iso(a.created_at), updated_at: iso(a.updated_at) };
}

const name = Type.String({ minLength: 1, maxLength: 255 });

/** Registers the routes of the module comment. */
export function registerSourceRoutes(app: FastifyInstance, deps: AppDeps): void {
  const db = deps.database.db;
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  addComponents(app, [TemplateComponent, Automation, Campaign]);
  const companyParams = idParams('company_id', 'the company', 12);
  const companyNotFound = notFound('Company not found');

  r.post('/admin/companies/:company_id/automations', {
    schema: {
      tags: ['operator: automations'], operationId: 'create_automation', summary: 'Create an automation (the template is checked: 422 with line and column)',
      params: companyParams,
      body: Type.Object({
        name,
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
    const automation = await createAutomation(db, deps.automationLookups, request.params.company_id, { name: b.name, type: b.type, active: b.active, template: checked.template, expire_after: expire });
    await recordAudit(db, { actor: 'admin', action: 'automation.create', target: `automation:${automation.automation_id}`, company_id: automation.company_id, details: { name: b.name, type: b.type, active: b.active } });
    return reply.code(201).send({ ...automationJson(automation), warnings: await variableWarnings(db, automation.company_id, checked.reads) });
  });

  r.patch('/admin/automations/:automation_id', {
    schema: {
      tags: ['operator: automations'], operationId: 'update_automation', summary: 'Change an automation (only the fields given; a template is checked as at create)',
      params: idParams('automation_id', 'the automation', 31),
      body: Type.Object({
        name: Type.Optional(name), active: Type.Optional(Type.Boolean()), template: Type.Optional(ref(TemplateComponent)),
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
    const automation = await updateAutomation(db, deps.automationLookups, request.params.automation_id, {
      name: b.name, active: b.active, template: checked?.template, expire_after: expire,
    });
    await recordAudit(db, { actor: 'admin', action: 'automation.update', target: `automation:${automation.automation_id}`, company_id: automation.company_id, details: { name: b.name, active: b.active, template_changed: b.template !== undefined } });
    return { ...automationJson(automation), warnings: checked ? await variableWarnings(db, automation.company_id, checked.reads) : [] };
  });

  r.post('/admin/companies/:company_id/campaigns', {
    schema: {
      tags: ['operator: campaigns'], operationId: 'create_campaign', summary: 'Create a campaign (the template is checked: 422 with line and column)',
      params: companyParams,
      body: Type.Object({ name, template: ref(TemplateComponent), expire_after: expireAfterInput(DEFAULT_CAMPAIGN_EXPIRE_AFTER), ignore_frequency_cap: Type.Optional(Type.Boolean({ description: "(default false) true: this campaign's messages are not held to the company's frequency cap (they still count toward it)" })) }, {
        examples: [{ name: 'Spring sale', template: { body: 'Hi {{ first_name }}, 20 % off all shoes this week.' }, expire_after: '2d' }],
      }),
      response: {
        201: ok('The campaign, with `warnings` about variables no contact has', ref(Campaign), exampleOf(Campaign)),
        ...adminErrors, 404: companyNotFound, 422: invalid(templateProblem),
      },
    },
  }, async (request, reply) => {
    const checked = template(request.body.template);
    const expire = expireAfter(request.body.expire_after);
    await checkWhatsappMapping(db, request.params.company_id, checked.template);
    const campaign = await createCampaign(db, request.params.company_id, { name: request.body.name, template: checked.template, expire_after: expire, ignore_frequency_cap: request.body.ignore_frequency_cap });
    await recordAudit(db, { actor: 'admin', action: 'campaign.create', target: `campaign:${campaign.campaign_id}`, company_id: campaign.company_id, details: { name: campaign.name, ...(campaign.ignore_frequency_cap ? { ignore_frequency_cap: true } : {}) } });
    return reply.code(201).send({
      campaign_id: campaign.campaign_id, company_id: campaign.company_id, name: campaign.name, template: campaign.template,
      expire_after: campaign.expire_after ?? null, ignore_frequency_cap: campaign.ignore_frequency_cap, created_at: iso(campaign.created_at),
      warnings: await variableWarnings(db, campaign.company_id, checked.reads),
    });
  });
}
