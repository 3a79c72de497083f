/**
 * Operator API: campaigns (docs/operator-api.md), the sources an operator sends to a segment or a list of
 * numbers. The template rules, `expire_after` and the routes every source has are in sources.ts.
 *
 * | route | answers |
 * |---|---|
 * | POST /admin/companies/{company_id}/campaigns | 201 `Campaign` with `warnings`; 401; 404 company; 422 |
 * | GET /admin/companies/{company_id}/campaigns | 200 `Source[]` (newest first); 401; 404 company; 422 |
 * | GET /admin/campaigns/{campaign_id} | 200 `Source`; 401; 404; 422 |
 * | PATCH /admin/campaigns/{campaign_id} `{name?, template?, expire_after?, ignore_frequency_cap?}` | 200 `CampaignUpdate` with `warnings`; 401; 404; 422 (`template_error`, nothing stored) |
 * | POST /admin/campaigns/{campaign_id}/preview | 200 `Preview`; 401; 404; 422 |
 * | POST /admin/campaigns/{campaign_id}/test-send `{phone}` | 202 `{batch_id}`; 401; 404; 422 |
 * | POST /admin/campaigns/{campaign_id}/sends `{segment_id \| contacts, scheduled_for?, expire_at?, dry_run?}` | 202 `{batch_id, plan}` (200 `{plan}` with `dry_run`); 401; 404 (an archived campaign too); 422 (`scheduled_for` in the past or more than 730 days ahead, `expire_at` more than 30 days after the send time ...) |
 * | DELETE /admin/campaigns/{campaign_id} | 200 `Source` with `archived_at` (archived: hidden from lists, cannot be sent); 401; 404; 422 |
 * | POST /admin/campaigns/{campaign_id}/restore | 200 `Source`, `archived_at` null; 401; 404; 422 |
 *
 * A send is cancelled through POST /admin/batches/{batch_id}/cancel (batches.ts). Unknown ids are
 * 404 `{"detail": "... not found"}`; every 422 is the admin list shape.
 */
import type { FastifyInstance } from 'fastify';
import { Type, type Static } from 'typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { changeCampaign, defineCampaign, findSource } from '../../domain/automations.ts';
import { OPERATOR } from '../../domain/actor.ts';
import { sendCampaign, SendRejected, type Audience, type SendPlan } from '../../domain/campaign-sends.ts';
import { DEFAULT_CAMPAIGN_EXPIRE_AFTER } from '../../domain/expiry.ts';
import type { AppDeps } from '../deps.ts';
import { addComponents, adminErrors, component, exampleOf, idParams, invalid, invalidInput, iso, notFound, ok, ref, TIME_EXAMPLE } from './components.ts';
import {
  BATCH_ID_EXAMPLE, checkWhatsappMapping, expireAfter, expireAfterInput, expireAfterShown, registerSourceToolRoutes, Source, sourceJson, sourceName,
  template, TemplateComponent, templateProblem, templateWarnings, variableWarnings,
} from './sources.ts';

/** A campaign, as created (with the template's warnings). */
export const Campaign = component('Campaign', Type.Object({
  campaign_id: Type.Integer(),
  company_id: Type.Integer(),
  name: Type.String(),
  template: ref(TemplateComponent),
  expire_after: expireAfterShown,
  ignore_frequency_cap: Type.Boolean({ description: "true: this campaign's messages are not held to the company's frequency cap (they still count toward it)" }),
  created_at: Type.String({ format: 'date-time' }),
  warnings: templateWarnings,
}), { campaign_id: 8, company_id: 12, name: 'Spring sale', template: { header: { type: 'none' }, body: 'Hi {{ first_name }}, 20 % off all shoes this week.', buttons: [] }, expire_after: '24h', ignore_frequency_cap: false, created_at: TIME_EXAMPLE, warnings: [] });

/** The answer of PATCH /admin/campaigns/{id}: the campaign, its id under both names, and the template's warnings. */
export const CampaignUpdate = component('CampaignUpdate', Type.Object({
  ...Source.properties,
  campaign_id: Type.Integer(),
  warnings: Type.Array(Type.String(), { description: 'one per variable the new template reads that no contact of the company has; [] when none or the template is unchanged' }),
}), { ...exampleOf(Source), campaign_id: 8, warnings: [] });

/** What a campaign send will do (times RFC 3339). */
export const SendPlanSchema = component('SendPlan', Type.Object({
  total: Type.Integer({ description: 'distinct numbers of the audience' }),
  send: Type.Integer({ description: 'messages that will be sent' }),
  skipped_opted_out: Type.Integer({ description: 'opted out of campaigns (a number whose erased contact had opted out included)' }),
  skipped_frequency_cap: Type.Integer({ description: "not opted out, but at the company's frequency cap (skipped, reason `frequency_cap`)" }),
  skipped_invalid: Type.Integer({ description: 'texts that are not phone numbers' }),
  duplicates_merged: Type.Integer({ description: 'numbers given more than once (after normalising to E.164): each is sent once; 0 for a segment' }),
  held_for_delivery_hours: Type.Integer({ description: 'of `send`: held because the delivery hours are closed at the send time' }),
  send_at: Type.String({ format: 'date-time', description: 'the send time (now, or scheduled_for)' }),
  opens_at: Type.String({ format: 'date-time', description: 'when the first message may leave: send_at or the next opening of the delivery hours' }),
}), { total: 4, send: 2, skipped_opted_out: 1, skipped_frequency_cap: 1, skipped_invalid: 0, duplicates_merged: 0, held_for_delivery_hours: 0, send_at: TIME_EXAMPLE, opens_at: TIME_EXAMPLE });

/** An RFC 3339 date-time with an offset as ms; 422 at `loc` otherwise. */
function instant(loc: string[], text: string): number {
  const ms = Date.parse(text);
  if (!Number.isFinite(ms) || !/(Z|[+-]\d{2}:\d{2})$/i.test(text)) throw invalidInput(loc, 'an RFC 3339 date-time with an offset', 'value_error', text);
  return ms;
}

/** The operator API's 422 for a refused send (the body field it names, the message it has always given). */
function rejected(err: SendRejected, b: { segment_id?: number; scheduled_for?: string; expire_at?: string }, sendAt: number | null) {
  const limit = err.limit === undefined ? '' : new Date(err.limit).toISOString();
  switch (err.field) {
    case 'audience': return invalidInput(['body', b.segment_id !== undefined ? 'segment_id' : 'contacts'], 'the audience has no numbers');
    case 'send_at': return invalidInput(['body', 'scheduled_for'], err.problem === 'past' ? 'must be in the future' : `must be at most 730 days ahead (not after ${limit})`, 'value_error', b.scheduled_for);
    case 'expire_at': return invalidInput(['body', 'expire_at'], err.problem === 'past' ? 'must be in the future'
      : err.problem === 'not_after_send' ? 'must be after scheduled_for'
        : `must be at most 30 days after ${sendAt === null ? 'now' : 'scheduled_for'} (not after ${limit})`, 'value_error', b.expire_at);
  }
}

const planJson = (p: SendPlan): Static<typeof SendPlanSchema> => ({ ...p, send_at: new Date(p.send_at).toISOString(), opens_at: new Date(p.opens_at).toISOString() });

/** Registers the routes of the module comment. */
export function registerCampaignRoutes(app: FastifyInstance, deps: AppDeps): void {
  const db = deps.database.db;
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  addComponents(app, [TemplateComponent, Campaign, CampaignUpdate, SendPlanSchema]);
  const companyParams = idParams('company_id', 'the company', 12);
  const companyNotFound = notFound('Company not found');

  r.post('/admin/companies/:company_id/campaigns', {
    schema: {
      tags: ['operator: campaigns'], operationId: 'create_campaign', summary: 'Create a campaign (the template is checked: 422 with line and column)',
      params: companyParams,
      body: Type.Object({ name: sourceName, template: ref(TemplateComponent), expire_after: expireAfterInput(DEFAULT_CAMPAIGN_EXPIRE_AFTER), ignore_frequency_cap: Type.Optional(Type.Boolean({ description: "(default false) true: this campaign's messages are not held to the company's frequency cap (they still count toward it)" })) }, {
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
    const campaign = await defineCampaign(deps, OPERATOR, request.params.company_id, { name: request.body.name, template: checked.template, expire_after: expire, ignore_frequency_cap: request.body.ignore_frequency_cap });
    return reply.code(201).send({
      campaign_id: campaign.campaign_id, company_id: campaign.company_id, name: campaign.name, template: campaign.template,
      expire_after: campaign.expire_after ?? null, ignore_frequency_cap: campaign.ignore_frequency_cap, created_at: iso(campaign.created_at),
      warnings: await variableWarnings(db, campaign.company_id, checked.reads),
    });
  });

  registerSourceToolRoutes(app, deps, 'campaign');

  const campaignParams = idParams('campaign_id', 'the campaign', 8);
  const campaignNotFound = notFound('Campaign not found');

  r.patch('/admin/campaigns/:campaign_id', {
    schema: {
      tags: ['operator: campaigns'], operationId: 'update_campaign', summary: 'Change a campaign (template checked as at create)', params: campaignParams,
      body: Type.Object({
        name: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
        template: Type.Optional(ref(TemplateComponent)),
        expire_after: expireAfterInput('unchanged'),
        ignore_frequency_cap: Type.Optional(Type.Boolean({ description: "true: its messages are not held to the company's frequency cap (they still count toward it)" })),
      }, { additionalProperties: false, examples: [{ name: 'Spring sale (week 2)' }] }),
      response: {
        200: ok('The campaign as changed, with `warnings`', ref(CampaignUpdate), exampleOf(CampaignUpdate)),
        ...adminErrors, 404: campaignNotFound, 422: invalid(templateProblem),
      },
    },
  }, async (request) => {
    const b = request.body ?? {};
    const checked = b.template === undefined ? undefined : template(b.template);
    const expire = expireAfter(b.expire_after);
    if (checked) await checkWhatsappMapping(db, (await findSource(db, 'campaign', request.params.campaign_id, null)).company_id, checked.template);
    const campaign = await changeCampaign(deps, OPERATOR, request.params.campaign_id, { name: b.name, template: checked?.template, expire_after: expire, ignore_frequency_cap: b.ignore_frequency_cap });
    return { ...sourceJson(campaign), campaign_id: campaign.id, warnings: checked ? await variableWarnings(db, campaign.company_id, checked.reads) : [] };
  });

  r.post('/admin/campaigns/:campaign_id/sends', {
    schema: {
      tags: ['operator: campaigns'], operationId: 'send_campaign', params: campaignParams,
      summary: 'Send a campaign to a segment or a list of numbers, now or at scheduled_for; dry_run answers the plan only',
      body: Type.Object({
        segment_id: Type.Optional(Type.Integer({ minimum: 1, maximum: 2147483647, description: 'one of segment_id and contacts' })),
        contacts: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { minItems: 1, maxItems: 100000, description: 'phone numbers (E.164 or national); one of segment_id and contacts' })),
        scheduled_for: Type.Optional(Type.String({ format: 'date-time', description: 'an instant in the future, at most 730 days ahead (RFC 3339 with offset)' })),
        expire_at: Type.Optional(Type.String({ format: 'date-time', description: "an instant in the future (RFC 3339 with offset), after scheduled_for and at most 30 days after the send time (scheduled_for, or now): a message not handed to the provider by then ends skipped, reason `expired` (instead of the campaign's expire_after)" })),
        dry_run: Type.Optional(Type.Boolean({ description: 'answer the plan only (200): how many would be sent, skipped as opted out, at the frequency cap or invalid; nothing is written' })),
      }, { additionalProperties: false, examples: [{ segment_id: 5, scheduled_for: '2026-03-03T08:00:00+01:00' }] }),
      response: {
        200: ok('dry_run: what the send would do; nothing was sent', Type.Object({ plan: ref(SendPlanSchema) }), { plan: exampleOf(SendPlanSchema) }),
        202: ok('Accepted: the send batch is committed', Type.Object({ batch_id: Type.String({ format: 'uuid' }), plan: ref(SendPlanSchema) }), { batch_id: BATCH_ID_EXAMPLE, plan: exampleOf(SendPlanSchema) }),
        ...adminErrors,
        404: notFound('Campaign not found', 'No such campaign, or it is archived (`Campaign not found`), or the segment is not the campaign company\'s (`Segment not found`)'),
        422: invalid({ type: 'value_error', loc: ['body', 'scheduled_for'], msg: 'must be in the future' }, 'Invalid body: neither or both of segment_id and contacts, a past or offset-less scheduled_for or expire_at, a scheduled_for more than 730 days ahead, an expire_at not after scheduled_for or more than 30 days after the send time, an audience without numbers, more than 100,000 pasted numbers or 1,000,000 segment members'),
      },
    },
  }, async (request, reply) => {
    const b = request.body;
    if ((b.segment_id === undefined) === (b.contacts === undefined)) {
      throw invalidInput(['body'], 'give exactly one of segment_id and contacts');
    }
    const sendAt = b.scheduled_for === undefined ? null : instant(['body', 'scheduled_for'], b.scheduled_for);
    const expireAt = b.expire_at === undefined ? null : instant(['body', 'expire_at'], b.expire_at);
    const audience: Audience = b.segment_id !== undefined ? { segment_id: b.segment_id } : { contacts: b.contacts! };
    let result;
    try {
      result = await sendCampaign(deps, OPERATOR, { campaignId: request.params.campaign_id, audience, sendAt, expireAt, dryRun: b.dry_run });
    } catch (err) {
      if (err instanceof SendRejected) throw rejected(err, b, sendAt);
      throw err;
    }
    if (result.dryRun) return { plan: planJson(result.plan) };
    return reply.code(202).send({ batch_id: result.batchId, plan: planJson(result.plan) });
  });
}
