/**
 * 4.3 Trigger automation: POST /api/automations/send (docs/api.md 4.3; docs/decisions.md#3-outcomes-of-the-four-operations, #6-contacts-personalisation-sending).
 * Only the first 50 contacts are processed (the rest are accepted, ignored and counted on the batch);
 * duplicates among them are sent once. The batch is committed with its job before `accepted`.
 */
import { AUTOMATION_PROCESS_LIMIT, distinctItems } from '../../domain/batches.ts';
import type { PublicOperation } from '../public-operation.ts';
import { acceptSend } from './accept-send.ts';
import { RULES } from '../rate-limit.ts';
import { TriggerAutomation, type TriggerAutomationBody } from '../validation/index.ts';

const answer = (batchId: string, contacts: number) => ({ batch_id: batchId, contacts, status: 'accepted' });

export const triggerAutomationOperation: PublicOperation<TriggerAutomationBody> = {
  operationId: 'trigger_automation',
  summary: 'Trigger automation',
  description: "Triggers an active automation of type 'api' for a list of contacts, with per-contact personalization data. Contacts that do not exist yet are created and their variables saved. Up to 1000 contacts accepted; only the first 50 are processed. Sends bypass delivery hours and opt-outs, and are queued and processed in the background. Rate limit: 20 per 1 second. Optional Idempotency-Key header.",
  url: '/api/automations/send',
  model: TriggerAutomation,
  rule: RULES.triggerAutomation,
  errors: { 400: "Automation is not of type 'api', or not active", 404: 'Automation not found' },
  successSchema: {
    content: { 'application/json': { schema: {
      type: 'object', required: ['batch_id', 'contacts', 'status'],
      properties: { batch_id: { type: 'string' }, contacts: { type: 'integer' }, status: { type: 'string', enum: ['accepted'] } },
    } } },
  },
  idempotent: true,
  recordsAnswer: true,
  async handle(ctx) {
    const { deps, auth, body } = ctx;
    const automation = await deps.automationLookups.findTriggerable(auth.companyId, body.automation_id);
    const first = body.contacts.slice(0, AUTOMATION_PROCESS_LIMIT);
    const items = distinctItems(first.map((c) => ({
      phone: c.phone,
      first_name: c.first_name ?? null,
      last_name: c.last_name ?? null,
      variables: c.variables ?? null,
      image_url: c.image_url ?? null,
      video_url: c.video_url ?? null,
    })), auth.defaultCountry);
    return acceptSend(ctx, {
      kind: 'automation',
      sourceId: automation.automation_id,
      template: automation.template,
      items,
      ignored: body.contacts.length - first.length,
      overrides: { image_url: body.image_url ?? null, video_url: body.video_url ?? null, url: body.url ?? null, url2: body.url2 ?? null },
    }, (batchId) => answer(batchId, items.length));
  },
};
