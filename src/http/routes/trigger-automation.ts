/**
 * 4.3 Trigger automation: POST /api/automations/send (api.md 4.3; decisions.md §3, §6).
 * Only the first 50 contacts are processed (the rest are accepted, ignored and counted on the batch);
 * duplicates among them are sent once. The batch is committed with its job before `accepted`.
 */
import { findTriggerableAutomation } from '../../domain/automations.ts';
import { AUTOMATION_PROCESS_LIMIT, acceptBatch, distinctItems } from '../../domain/batches.ts';
import type { PublicOperation } from '../public-operation.ts';
import { RULES } from '../rate-limit.ts';
import { TriggerAutomation } from '../validation/index.ts';

/** A contact item of 4.3 after validation (decisions.md §2 AutomationContact). */
export interface AutomationContactInput {
  phone: string;
  first_name?: string | null;
  last_name?: string | null;
  variables?: Record<string, unknown> | null;
  image_url?: string | null;
  video_url?: string | null;
}

/** The 4.3 body after validation (decisions.md §2 TriggerAutomation). */
export interface TriggerAutomationInput {
  automation_id: number | bigint;
  contacts: AutomationContactInput[];
  image_url?: string | null;
  video_url?: string | null;
  url?: string | null;
  url2?: string | null;
}

const answer = (batchId: string, contacts: number) => ({ batch_id: batchId, contacts, status: 'accepted' });

export const triggerAutomationOperation: PublicOperation<TriggerAutomationInput> = {
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
  async handle({ deps, auth, body, recordAnswer }) {
    const automation = await findTriggerableAutomation(deps.database.db, auth.companyId, body.automation_id);
    const first = body.contacts.slice(0, AUTOMATION_PROCESS_LIMIT);
    const items = distinctItems(first.map((c) => ({
      phone: c.phone,
      first_name: c.first_name ?? null,
      last_name: c.last_name ?? null,
      variables: c.variables ?? null,
      image_url: c.image_url ?? null,
      video_url: c.video_url ?? null,
    })), auth.defaultCountry);
    const batchId = await acceptBatch(deps.database.db, deps.boss, {
      companyId: auth.companyId,
      kind: 'automation',
      sourceId: automation.automation_id,
      template: automation.template,
      items,
      ignored: body.contacts.length - first.length,
      overrides: { image_url: body.image_url ?? null, video_url: body.video_url ?? null, url: body.url ?? null, url2: body.url2 ?? null },
    }, recordAnswer && ((trx, id) => recordAnswer(trx, answer(id, items.length))));
    return answer(batchId, items.length);
  },
};
