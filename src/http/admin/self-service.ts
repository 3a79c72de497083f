/**
 * Operator API for the company self-service console (issue 15 items 1-2; operator-api.md): the routes
 * the console's automation, campaign and send pages stand on, with the same rules.
 *
 * - `GET /admin/companies/{id}/automations`, `.../campaigns`: lists (newest first);
 *   `GET /admin/automations/{id}`, `GET /admin/campaigns/{id}`: one.
 * - `PATCH /admin/campaigns/{id}` `{name?, template?}`: the template checked as at create (422
 *   `template_error`, nothing stored), answer with `warnings`.
 * - `POST /admin/automations/{id}/preview`, `/admin/campaigns/{id}/preview` `{phone? | first_name?,
 *   last_name?, variables?}` → 200 `{contact_found, rendered}` (the pipeline's own render, see
 *   src/domain/source-tools.ts) or 422 `{"detail":"template error: ..."}`.
 * - `POST /admin/automations/{id}/test-send`, `/admin/campaigns/{id}/test-send` `{phone}` → 202
 *   `{batch_id}`: a batch of one through the accept step.
 * - `POST /admin/campaigns/{id}/sends` `{segment_id | contacts, scheduled_for?, dry_run?}` → 202
 *   `{batch_id, plan}` (or 200 `{plan}` with `dry_run`); `scheduled_for` in the past is 422.
 * - `POST /admin/batches/{id}/cancel` → 200 `{batch_id, cancelled, before_fan_out}`
 *   (src/domain/campaign-sends.ts: unsent messages end skipped / `cancelled`).
 * Unknown ids are 404 `{"detail": "... not found"}`.
 */
import type { FastifyInstance } from 'fastify';
import { recordAudit } from '../../domain/audit.ts';
import { audiencePhones, cancelBatch, planSend, sendCompany, startCampaignSend, type Audience, type SendPlan } from '../../domain/campaign-sends.ts';
import { DomainError } from '../../domain/errors.ts';
import { findSource, listAutomations, listCampaigns, previewSource, testSend, updateCampaign, type SourceKind, type SourceRow } from '../../domain/source-tools.ts';
import { templateSchema } from '../../domain/templates.ts';
import type { AppDeps } from '../deps.ts';
import { AdminValidationError } from './errors.ts';
import { detailResponse, idParam } from './schemas.ts';
import { template, variableWarnings } from './sources.ts';

const time = { type: 'string', format: 'date-time' } as const;

const sourceSchema = {
  type: 'object',
  properties: {
    id: { type: 'integer' }, company_id: { type: 'integer' }, name: { type: 'string' },
    type: { type: 'string', description: 'automations only' }, active: { type: 'boolean', description: 'automations only' },
    template: { type: 'object', additionalProperties: true }, created_at: time,
  },
} as const;

const planSchema = {
  type: 'object',
  properties: {
    total: { type: 'integer' }, send: { type: 'integer' }, skipped_opted_out: { type: 'integer' }, skipped_invalid: { type: 'integer' },
    held_for_delivery_hours: { type: 'integer' }, send_at: time, opens_at: time,
  },
} as const;

const previewBody = {
  type: 'object', additionalProperties: false,
  properties: {
    phone: { type: 'string', minLength: 1, maxLength: 64, description: 'a contact of the company (its names and variables); no contact: known by phone only' },
    first_name: { type: ['string', 'null'], maxLength: 255 },
    last_name: { type: ['string', 'null'], maxLength: 255 },
    variables: { type: ['object', 'null'], additionalProperties: true },
  },
} as const;

const planJson = (p: SendPlan) => ({ ...p, send_at: new Date(p.send_at).toISOString(), opens_at: new Date(p.opens_at).toISOString() });

const sourceJson = (s: SourceRow) => ({
  id: s.id, company_id: s.company_id, name: s.name, ...(s.kind === 'automation' ? { type: s.type, active: s.active } : {}),
  template: s.template, created_at: s.created_at,
});

/** Registers the routes of the module comment. */
export function registerSelfServiceRoutes(app: FastifyInstance, deps: AppDeps): void {
  const db = deps.database.db;

  for (const kind of ['automation', 'campaign'] as SourceKind[]) {
    const plural = `${kind}s`;
    const tags = [`operator: ${plural}`];
    const idName = `${kind}_id`;

    app.get<{ Params: { company_id: number } }>(`/admin/companies/:company_id/${plural}`, {
      schema: {
        tags, operationId: `list_${plural}`, summary: `The company's ${plural}, newest first`, params: idParam('company_id'),
        response: { 200: { type: 'array', items: sourceSchema }, 404: detailResponse },
      },
    }, async (request) => {
      const company = await sendCompany(db, request.params.company_id);
      const rows = kind === 'automation' ? await listAutomations(db, company.company_id) : await listCampaigns(db, company.company_id);
      return rows.map(sourceJson);
    });

    app.get<{ Params: Record<string, number> }>(`/admin/${plural}/:${idName}`, {
      schema: {
        tags, operationId: `get_${kind}`, summary: `One ${kind} with its template`, params: idParam(idName),
        response: { 200: sourceSchema, 404: detailResponse },
      },
    }, async (request) => sourceJson(await findSource(db, kind, request.params[idName], null)));

    app.post<{ Params: Record<string, number>; Body: { phone?: string; first_name?: string | null; last_name?: string | null; variables?: Record<string, unknown> | null } }>(`/admin/${plural}/:${idName}/preview`, {
      schema: {
        tags, operationId: `preview_${kind}`, params: idParam(idName), body: previewBody,
        summary: `Preview the ${kind}'s message for a contact (by phone) or sample data, rendered by the pipeline's code`,
        response: {
          200: { type: 'object', properties: { contact_found: { type: 'boolean' }, rendered: { type: 'object', additionalProperties: true } } },
          404: detailResponse, 422: { description: 'template error, or an invalid phone number' },
        },
      },
    }, async (request, reply) => {
      const source = await findSource(db, kind, request.params[idName], null);
      const result = await previewSource(db, source, request.body ?? {});
      if (!result.ok) return reply.code(422).send({ detail: result.error });
      return { contact_found: result.contact_found, rendered: result.rendered };
    });

    app.post<{ Params: Record<string, number>; Body: { phone: string } }>(`/admin/${plural}/:${idName}/test-send`, {
      schema: {
        tags, operationId: `test_send_${kind}`, params: idParam(idName),
        summary: `Send the ${kind}'s message to one number now, through the send pipeline (appears in Sends)`,
        body: { type: 'object', required: ['phone'], additionalProperties: false, properties: { phone: { type: 'string', minLength: 1, maxLength: 64 } } },
        response: { 202: { type: 'object', properties: { batch_id: { type: 'string' } } }, 404: detailResponse, 422: { description: 'invalid phone number' } },
      },
    }, async (request, reply) => {
      const source = await findSource(db, kind, request.params[idName], null);
      const batchId = await testSend(db, deps.acceptor, source, request.body.phone);
      await recordAudit(db, { actor: 'admin', action: `${kind}.test_send`, target: `batch:${batchId}`, company_id: source.company_id, details: { [idName]: source.id } });
      return reply.code(202).send({ batch_id: batchId });
    });
  }

  app.patch<{ Params: { campaign_id: number }; Body: { name?: string; template?: unknown } }>('/admin/campaigns/:campaign_id', {
    schema: {
      tags: ['operator: campaigns'], operationId: 'update_campaign', summary: 'Change a campaign (template checked as at create)', params: idParam('campaign_id'),
      body: { type: 'object', additionalProperties: false, properties: { name: { type: 'string', minLength: 1, maxLength: 255 }, template: templateSchema } },
      response: { 404: detailResponse },
    },
  }, async (request) => {
    const b = request.body ?? {};
    const checked = b.template === undefined ? undefined : template(b.template);
    const campaign = await updateCampaign(db, request.params.campaign_id, { name: b.name, template: checked?.template });
    await recordAudit(db, { actor: 'admin', action: 'campaign.update', target: `campaign:${campaign.id}`, company_id: campaign.company_id, details: { name: b.name, template_changed: b.template !== undefined } });
    return { ...sourceJson(campaign), campaign_id: campaign.id, warnings: checked ? await variableWarnings(db, campaign.company_id, checked.reads) : [] };
  });

  app.post<{ Params: { campaign_id: number }; Body: { segment_id?: number; contacts?: string[]; scheduled_for?: string; dry_run?: boolean } }>('/admin/campaigns/:campaign_id/sends', {
    schema: {
      tags: ['operator: campaigns'], operationId: 'send_campaign', params: idParam('campaign_id'),
      summary: 'Send a campaign to a segment or a list of numbers, now or at scheduled_for; dry_run answers the plan only',
      body: {
        type: 'object', additionalProperties: false,
        properties: {
          segment_id: { type: 'integer', minimum: 1, maximum: 2147483647 },
          contacts: { type: 'array', minItems: 1, maxItems: 100000, items: { type: 'string', minLength: 1, maxLength: 64 } },
          scheduled_for: { type: 'string', format: 'date-time', description: 'an instant in the future (RFC 3339 with offset)' },
          dry_run: { type: 'boolean' },
        },
      },
      response: {
        200: { type: 'object', properties: { plan: planSchema } },
        202: { type: 'object', properties: { batch_id: { type: 'string' }, plan: planSchema } },
        404: detailResponse,
      },
    },
  }, async (request, reply) => {
    const b = request.body;
    if ((b.segment_id === undefined) === (b.contacts === undefined)) {
      throw new AdminValidationError([{ type: 'value_error', loc: ['body'], msg: 'give exactly one of segment_id and contacts' }]);
    }
    const campaign = await findSource(db, 'campaign', request.params.campaign_id, null);
    const now = deps.clock.now();
    let sendAt: number | null = null;
    if (b.scheduled_for !== undefined) {
      sendAt = Date.parse(b.scheduled_for);
      if (!Number.isFinite(sendAt) || !/(Z|[+-]\d{2}:\d{2})$/i.test(b.scheduled_for)) throw new AdminValidationError([{ type: 'value_error', loc: ['body', 'scheduled_for'], msg: 'an RFC 3339 date-time with an offset' }]);
      if (sendAt <= now) throw new AdminValidationError([{ type: 'value_error', loc: ['body', 'scheduled_for'], msg: 'must be in the future' }]);
    }
    const company = await sendCompany(db, campaign.company_id);
    const audience: Audience = b.segment_id !== undefined ? { segment_id: b.segment_id } : { contacts: b.contacts! };
    const phones = await audiencePhones(db, company.company_id, audience);
    const { items, plan } = await planSend(db, company, phones, sendAt ?? now);
    if (b.dry_run) return { plan: planJson(plan) };
    if (items.length === 0) throw new DomainError(422, 'the audience has no numbers');
    const batchId = await startCampaignSend(db, deps.acceptor, campaign, items, sendAt);
    await recordAudit(db, { actor: 'admin', action: 'campaign.send', target: `batch:${batchId}`, company_id: company.company_id, details: { campaign_id: campaign.id, ...('segment_id' in audience ? { segment_id: audience.segment_id } : { contacts: items.length }), scheduled_for: sendAt === null ? null : new Date(sendAt).toISOString() } });
    return reply.code(202).send({ batch_id: batchId, plan: planJson(plan) });
  });

  app.post<{ Params: { batch_id: string } }>('/admin/batches/:batch_id/cancel', {
    schema: {
      tags: ['operator: batches'], operationId: 'cancel_batch', summary: 'Cancel what a send has not handed to a provider (ends skipped, reason cancelled)',
      params: { type: 'object', required: ['batch_id'], properties: { batch_id: { type: 'string', maxLength: 64 } } },
      response: {
        200: { type: 'object', properties: { batch_id: { type: 'string' }, cancelled: { type: 'integer' }, before_fan_out: { type: 'boolean' } } },
        404: detailResponse,
      },
    },
  }, async (request) => {
    const result = await cancelBatch(db, request.params.batch_id, null, deps.clock.now());
    const batch = await db.selectFrom('batches').select('company_id').where('batch_id', '=', result.batch_id).executeTakeFirstOrThrow();
    await recordAudit(db, { actor: 'admin', action: 'batch.cancel', target: `batch:${result.batch_id}`, company_id: batch.company_id, details: { cancelled: result.cancelled } });
    return result;
  });
}
