/**
 * Operator API for the company self-service console (docs/operator-api.md): the routes
 * the console's automation, campaign and send pages stand on, with the same rules.
 *
 * - `GET /admin/companies/{id}/automations`, `.../campaigns`: lists (newest first);
 *   `GET /admin/automations/{id}`, `GET /admin/campaigns/{id}`: one.
 * - `PATCH /admin/campaigns/{id}` `{name?, template?}`: the template checked as at create (422
 *   `template_error`, nothing stored), answer with `warnings`.
 * - `POST /admin/automations/{id}/preview`, `/admin/campaigns/{id}/preview` `{phone? | first_name?,
 *   last_name?, variables?}` → 200 `{contact_found, rendered}` (the pipeline's own render, see
 *   src/domain/source-tools.ts) or 422 `{"detail":[{type:"template_error", loc:["body"], msg}]}`.
 * - `POST /admin/automations/{id}/test-send`, `/admin/campaigns/{id}/test-send` `{phone}` → 202
 *   `{batch_id}`: a batch of one through the accept step.
 * - `POST /admin/campaigns/{id}/sends` `{segment_id | contacts, scheduled_for?, expire_at?, dry_run?}` → 202
 *   `{batch_id, plan}` (or 200 `{plan}` with `dry_run`); `scheduled_for` in the past is 422.
 * - `POST /admin/batches/{id}/cancel` → 200 `{batch_id, cancelled, before_fan_out}` within a short
 *   transaction whatever the batch's size (src/domain/batch-control.ts: messages not handed to a
 *   provider end skipped / `cancelled`; docs/decisions.md "Cancel, pause and resume").
 * Unknown ids are 404 `{"detail": "... not found"}`; every 422 is the admin list shape (an invalid phone
 * number at `loc: ["body", "phone"]`). Typed from TypeBox schemas (components.ts pattern).
 */
import type { FastifyInstance } from 'fastify';
import { Type, type Static } from 'typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { recordAudit } from '../../domain/audit.ts';
import { audiencePhones, planSend, sendCompany, startCampaignSend, type Audience, type SendPlan } from '../../domain/campaign-sends.ts';
import { cancelBatch } from '../../domain/batch-control.ts';
import { DomainError } from '../../domain/errors.ts';
import { findSource, listAutomations, listCampaigns, previewSource, testSend, updateCampaign, type SourceKind, type SourceRow } from '../../domain/source-tools.ts';
import type { AppDeps } from '../deps.ts';
import {
  addComponents, adminErrors, component, exampleOf, freeObject, idParams, invalid, invalidInput, iso, notFound, ok, ref, renderedContent, TIME_EXAMPLE,
} from './components.ts';
import { checkWhatsappMapping, expireAfter, expireAfterInput, template, templateProblem, TemplateComponent, variableWarnings } from './sources.ts';

const time = Type.String({ format: 'date-time' });
const BATCH_ID_EXAMPLE = '0b6f3c1e-6f0a-4a55-9d1e-2f8f3a7c9b10';

/** An automation or campaign as the lists and reads show it (`type` and `active`: automations only). */
export const Source = component('Source', Type.Object({
  id: Type.Integer({ description: 'the automation_id or campaign_id' }),
  company_id: Type.Integer(),
  name: Type.String(),
  type: Type.Optional(Type.String({ description: 'automations only' })),
  active: Type.Optional(Type.Boolean({ description: 'automations only' })),
  template: ref(TemplateComponent),
  expire_after: Type.Union([Type.String(), Type.Null()], { description: 'how long its messages stay worth sending (a duration such as `24h`); null: forever' }),
  created_at: time,
}), { id: 8, company_id: 12, name: 'Spring sale', template: { header: { type: 'none' }, body: 'Hi {{ first_name }}, 20 % off all shoes this week.', buttons: [] }, expire_after: '24h', created_at: TIME_EXAMPLE });

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
  skipped_opted_out: Type.Integer(),
  skipped_invalid: Type.Integer({ description: 'texts that are not phone numbers' }),
  held_for_delivery_hours: Type.Integer({ description: 'of `send`: held because the delivery hours are closed at the send time' }),
  send_at: Type.String({ format: 'date-time', description: 'the send time (now, or scheduled_for)' }),
  opens_at: Type.String({ format: 'date-time', description: 'when the first message may leave: send_at or the next opening of the delivery hours' }),
}), { total: 3, send: 2, skipped_opted_out: 1, skipped_invalid: 0, held_for_delivery_hours: 0, send_at: TIME_EXAMPLE, opens_at: TIME_EXAMPLE });

/** The content a message would be delivered with (as the provider receives it, without ids). */
export const RenderedMessage = component('RenderedMessage', Type.Object({
  ...renderedContent,
}, { additionalProperties: true }), { to: '+4915112345678', header: { type: 'none' }, body: 'Hi Anna, 20 % off all shoes this week.', buttons: [] });

/** The answer of a preview. */
export const Preview = component('Preview', Type.Object({
  contact_found: Type.Boolean({ description: 'the phone is a contact of the company (its names and variables were used); false: sample data' }),
  rendered: ref(RenderedMessage),
}), { contact_found: true, rendered: exampleOf(RenderedMessage) });

/** The answer of a cancel. */
export const CancelAnswer = component('CancelAnswer', Type.Object({
  batch_id: Type.String({ format: 'uuid' }),
  cancelled: Type.Integer({ description: 'messages this cancel stopped: those not handed to a provider (pending and not claimed by a delivery run) and those not written yet; each ends skipped with reason cancelled (the last ones within seconds). 0 when the batch was completed or cancelled already' }),
  before_fan_out: Type.Boolean({ description: 'none of the batch\'s messages was written yet (the fan-out writes each skipped / cancelled)' }),
}), { batch_id: BATCH_ID_EXAMPLE, cancelled: 118, before_fan_out: false });

const planJson = (p: SendPlan): Static<typeof SendPlanSchema> => ({ ...p, send_at: new Date(p.send_at).toISOString(), opens_at: new Date(p.opens_at).toISOString() });

const sourceJson = (s: SourceRow): Static<typeof Source> => ({
  id: s.id, company_id: s.company_id, name: s.name, ...(s.kind === 'automation' ? { type: s.type, active: s.active } : {}),
  template: s.template, expire_after: s.expire_after, created_at: iso(s.created_at),
});

/** A 422 `invalid phone number` of a domain function, at the body's `phone`. */
async function phoneChecked<T>(phone: string | undefined, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    if (err instanceof DomainError && err.status === 422) throw invalidInput(['body', 'phone'], err.detail, 'value_error', phone);
    throw err;
  }
}

const badPhone = { type: 'value_error', loc: ['body', 'phone'], msg: 'invalid phone number', input: 'not a phone' };

/** Registers the routes of the module comment. */
export function registerSelfServiceRoutes(app: FastifyInstance, deps: AppDeps): void {
  const db = deps.database.db;
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  addComponents(app, [Source, CampaignUpdate, SendPlanSchema, RenderedMessage, Preview, CancelAnswer]);

  for (const kind of ['automation', 'campaign'] as SourceKind[]) {
    const plural = `${kind}s`;
    const tags = [`operator: ${plural}`];
    const idName = `${kind}_id`;
    const Kind = kind === 'automation' ? 'Automation' : 'Campaign';
    const params = idParams(idName, `the ${kind}`, kind === 'automation' ? 31 : 8);
    const sourceNotFound = notFound(`${Kind} not found`);
    const badId = invalid({ type: 'type', loc: ['path', idName], msg: 'must be integer' });
    const example = kind === 'automation'
      ? { ...exampleOf(Source), id: 31, name: 'Order shipped', type: 'api', active: true }
      : exampleOf(Source);

    r.get(`/admin/companies/:company_id/${plural}`, {
      schema: {
        tags, operationId: `list_${plural}`, summary: `The company's ${plural}, newest first`, params: idParams('company_id', 'the company', 12),
        response: {
          200: ok(`The ${plural}`, Type.Array(ref(Source)), [example]),
          ...adminErrors, 404: notFound('Company not found'), 422: invalid({ type: 'type', loc: ['path', 'company_id'], msg: 'must be integer' }),
        },
      },
    }, async (request) => {
      const company = await sendCompany(db, request.params.company_id);
      const rows = kind === 'automation' ? await listAutomations(db, company.company_id) : await listCampaigns(db, company.company_id);
      return rows.map(sourceJson);
    });

    r.get(`/admin/${plural}/:${idName}`, {
      schema: {
        tags, operationId: `get_${kind}`, summary: `One ${kind} with its template`, params,
        response: { 200: ok(`The ${kind}`, ref(Source), example), ...adminErrors, 404: sourceNotFound, 422: badId },
      },
    }, async (request) => sourceJson(await findSource(db, kind, request.params[idName], null)));

    r.post(`/admin/${plural}/:${idName}/preview`, {
      schema: {
        tags, operationId: `preview_${kind}`, params,
        summary: `Preview the ${kind}'s message for a contact (by phone) or sample data, rendered by the pipeline's code`,
        body: Type.Object({
          phone: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'a contact of the company (its names and variables); no contact: known by phone only' })),
          first_name: Type.Optional(Type.Union([Type.String({ maxLength: 255 }), Type.Null()], { description: 'sample data when no contact is used' })),
          last_name: Type.Optional(Type.Union([Type.String({ maxLength: 255 }), Type.Null()])),
          variables: Type.Optional(Type.Union([freeObject(), Type.Null()], { description: 'sample variables' })),
        }, { additionalProperties: false, examples: [{ first_name: 'Anna', variables: { order_id: 'A-1042' } }] }),
        response: {
          200: ok('The message as it would be delivered', ref(Preview), exampleOf(Preview)),
          ...adminErrors, 404: sourceNotFound,
          422: invalid(badPhone, 'The template does not render (`template_error`, nothing is sent), an invalid phone number, or an invalid body'),
        },
      },
    }, async (request, reply) => {
      const source = await findSource(db, kind, request.params[idName], null);
      const body = request.body ?? {};
      const result = await phoneChecked(body.phone, () => previewSource(db, source, body));
      if (!result.ok) return reply.code(422).send({ detail: [{ type: 'template_error', loc: ['body'], msg: result.error }] });
      return { contact_found: result.contact_found, rendered: result.rendered };
    });

    r.post(`/admin/${plural}/:${idName}/test-send`, {
      schema: {
        tags, operationId: `test_send_${kind}`, params,
        summary: `Send the ${kind}'s message to one number now, through the send pipeline (appears in Sends)`,
        body: Type.Object({ phone: Type.String({ minLength: 1, maxLength: 64 }) }, { additionalProperties: false, examples: [{ phone: '+4915112345678' }] }),
        response: {
          202: ok('Accepted: the batch of one is committed and will be delivered', Type.Object({ batch_id: Type.String({ format: 'uuid' }) }), { batch_id: BATCH_ID_EXAMPLE }),
          ...adminErrors, 404: sourceNotFound, 422: invalid(badPhone),
        },
      },
    }, async (request, reply) => {
      const source = await findSource(db, kind, request.params[idName], null);
      const batchId = await phoneChecked(request.body.phone, () => testSend(db, deps.acceptor, source, request.body.phone));
      await recordAudit(db, { actor: 'admin', action: `${kind}.test_send`, target: `batch:${batchId}`, company_id: source.company_id, details: { [idName]: source.id } });
      return reply.code(202).send({ batch_id: batchId });
    });
  }

  const campaignParams = idParams('campaign_id', 'the campaign', 8);
  const campaignNotFound = notFound('Campaign not found');

  r.patch('/admin/campaigns/:campaign_id', {
    schema: {
      tags: ['operator: campaigns'], operationId: 'update_campaign', summary: 'Change a campaign (template checked as at create)', params: campaignParams,
      body: Type.Object({
        name: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
        template: Type.Optional(ref(TemplateComponent)),
        expire_after: expireAfterInput('unchanged'),
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
    const campaign = await updateCampaign(db, request.params.campaign_id, { name: b.name, template: checked?.template, expire_after: expire });
    await recordAudit(db, { actor: 'admin', action: 'campaign.update', target: `campaign:${campaign.id}`, company_id: campaign.company_id, details: { name: b.name, template_changed: b.template !== undefined } });
    return { ...sourceJson(campaign), campaign_id: campaign.id, warnings: checked ? await variableWarnings(db, campaign.company_id, checked.reads) : [] };
  });

  r.post('/admin/campaigns/:campaign_id/sends', {
    schema: {
      tags: ['operator: campaigns'], operationId: 'send_campaign', params: campaignParams,
      summary: 'Send a campaign to a segment or a list of numbers, now or at scheduled_for; dry_run answers the plan only',
      body: Type.Object({
        segment_id: Type.Optional(Type.Integer({ minimum: 1, maximum: 2147483647, description: 'one of segment_id and contacts' })),
        contacts: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { minItems: 1, maxItems: 100000, description: 'phone numbers (E.164 or national); one of segment_id and contacts' })),
        scheduled_for: Type.Optional(Type.String({ format: 'date-time', description: 'an instant in the future (RFC 3339 with offset)' })),
        expire_at: Type.Optional(Type.String({ format: 'date-time', description: "an instant in the future (RFC 3339 with offset), after scheduled_for: a message not handed to the provider by then ends skipped, reason `expired` (instead of the campaign's expire_after)" })),
        dry_run: Type.Optional(Type.Boolean({ description: 'answer the plan only (200), send nothing' })),
      }, { additionalProperties: false, examples: [{ segment_id: 5, scheduled_for: '2026-03-03T08:00:00+01:00' }] }),
      response: {
        200: ok('dry_run: what the send would do; nothing was sent', Type.Object({ plan: ref(SendPlanSchema) }), { plan: exampleOf(SendPlanSchema) }),
        202: ok('Accepted: the send batch is committed', Type.Object({ batch_id: Type.String({ format: 'uuid' }), plan: ref(SendPlanSchema) }), { batch_id: BATCH_ID_EXAMPLE, plan: exampleOf(SendPlanSchema) }),
        ...adminErrors,
        404: notFound('Campaign not found', 'No such campaign, or the segment is not the campaign company\'s (`Segment not found`)'),
        422: invalid({ type: 'value_error', loc: ['body', 'scheduled_for'], msg: 'must be in the future' }, 'Invalid body: neither or both of segment_id and contacts, a past or offset-less scheduled_for or expire_at, an expire_at not after scheduled_for, an audience without numbers, more than 100,000 numbers'),
      },
    },
  }, async (request, reply) => {
    const b = request.body;
    if ((b.segment_id === undefined) === (b.contacts === undefined)) {
      throw invalidInput(['body'], 'give exactly one of segment_id and contacts');
    }
    const campaign = await findSource(db, 'campaign', request.params.campaign_id, null);
    const now = deps.clock.now();
    let sendAt: number | null = null;
    if (b.scheduled_for !== undefined) {
      sendAt = Date.parse(b.scheduled_for);
      if (!Number.isFinite(sendAt) || !/(Z|[+-]\d{2}:\d{2})$/i.test(b.scheduled_for)) throw invalidInput(['body', 'scheduled_for'], 'an RFC 3339 date-time with an offset', 'value_error', b.scheduled_for);
      if (sendAt <= now) throw invalidInput(['body', 'scheduled_for'], 'must be in the future', 'value_error', b.scheduled_for);
    }
    let expireAt: number | null = null;
    if (b.expire_at !== undefined) {
      expireAt = Date.parse(b.expire_at);
      if (!Number.isFinite(expireAt) || !/(Z|[+-]\d{2}:\d{2})$/i.test(b.expire_at)) throw invalidInput(['body', 'expire_at'], 'an RFC 3339 date-time with an offset', 'value_error', b.expire_at);
      if (expireAt <= now) throw invalidInput(['body', 'expire_at'], 'must be in the future', 'value_error', b.expire_at);
      if (sendAt !== null && expireAt <= sendAt) throw invalidInput(['body', 'expire_at'], 'must be after scheduled_for', 'value_error', b.expire_at);
    }
    const company = await sendCompany(db, campaign.company_id);
    const audience: Audience = b.segment_id !== undefined ? { segment_id: b.segment_id } : { contacts: b.contacts! };
    const phones = await audiencePhones(db, company.company_id, audience, now);
    const { items, plan } = await planSend(db, company, phones, sendAt ?? now);
    if (b.dry_run) return { plan: planJson(plan) };
    if (items.length === 0) throw invalidInput(['body', 'segment_id' in audience ? 'segment_id' : 'contacts'], 'the audience has no numbers');
    const batchId = await startCampaignSend(db, deps.acceptor, campaign, items, sendAt, expireAt);
    await recordAudit(db, { actor: 'admin', action: 'campaign.send', target: `batch:${batchId}`, company_id: company.company_id, details: { campaign_id: campaign.id, ...('segment_id' in audience ? { segment_id: audience.segment_id } : { contacts: items.length }), scheduled_for: sendAt === null ? null : new Date(sendAt).toISOString(), ...(expireAt === null ? {} : { expire_at: new Date(expireAt).toISOString() }) } });
    return reply.code(202).send({ batch_id: batchId, plan: planJson(plan) });
  });

  r.post('/admin/batches/:batch_id/cancel', {
    schema: {
      tags: ['operator: batches'], operationId: 'cancel_batch', summary: 'Cancel what a send has not handed to a provider (ends skipped, reason cancelled)',
      description: 'Answers within a short transaction at any moment of a send. From the answer on, nothing more of the batch is handed to a provider: only messages a delivery run had already claimed can still be sent (at most 2 × 32 per delivery run, in practice those in flight); every other message ends skipped with reason `cancelled`. A scheduled send can be cancelled before it starts. A completed or already cancelled batch answers 200 with `cancelled: 0`.',
      params: Type.Object({ batch_id: Type.String({ maxLength: 64, description: 'the batch id (a UUID)', examples: [BATCH_ID_EXAMPLE] }) }),
      response: {
        200: ok('Cancelled (again: 200 with cancelled 0)', ref(CancelAnswer), exampleOf(CancelAnswer)),
        ...adminErrors,
        404: notFound('Batch not found', 'No such batch (an id that is not a UUID too)'),
        422: invalid({ type: 'maxLength', loc: ['path', 'batch_id'], msg: 'must NOT have more than 64 characters' }),
      },
    },
  }, async (request) => {
    const result = await cancelBatch(db, deps.jobs, request.params.batch_id, null, deps.clock.now());
    const batch = await db.selectFrom('batches').select('company_id').where('batch_id', '=', result.batch_id).executeTakeFirstOrThrow();
    await recordAudit(db, { actor: 'admin', action: 'batch.cancel', target: `batch:${result.batch_id}`, company_id: batch.company_id, details: { cancelled: result.cancelled } });
    return result;
  });
}
