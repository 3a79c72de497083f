/**
 * Changes a provider reports about a company's channel and its templates, and applying them for one
 * company (job `receipts-apply`, in one transaction). Provider-neutral: a provider's webhook parser
 * (WhatsApp: src/providers/whatsapp/webhooks.ts, Meta's account-level fields) turns its payload into
 * these changes; applying them knows no provider.
 *
 * | change | applied |
 * |---|---|
 * | `template` | the catalogue entry's `status` (and `rejected_reason`), `quality_score` or `category`; APPROVED releases messages waiting with `template_paused` |
 * | `phone_quality` | the channel's `quality_rating` and `messaging_limit` |
 * | `pause` | the channel paused (`channel.paused`) |
 *
 * A template is found by the provider's id, else by name and language; a template not in the
 * company's copy changes nothing (the next sync brings it). A change older than the copy (its time
 * more than a second before the template's `synced_at`) changes nothing.
 */
import type { Db } from '../db/database.ts';
import { updateTemplateFromWebhook, setMessagingLimit, type TemplateRef } from '../db/whatsapp-webhooks.ts';
import { releaseWaiting, setQualityRating, WAIT_REASONS } from '../db/whatsapp-channel.ts';
import { pauseChannel } from './channel-state.ts';

/** A template change: which template and what it sets (undefined: unchanged). Times in ms. */
export interface TemplateChange {
  kind: 'template';
  /** `entry[].time` (ms), or null when Meta sent none (the job's clock then). */
  at: number | null;
  ref: TemplateRef;
  status?: string;
  /** Set with `status`: the rejection reason (REJECTED), or null (any other status). */
  rejected_reason?: string | null;
  quality_score?: string;
  category?: string;
}

/** A phone number's quality (phone_number_quality_update): the quality word to keep (or undefined) and the messaging limit (undefined: unchanged). */
export interface PhoneQualityChange { kind: 'phone_quality'; at: number | null; event: string; quality_rating?: string; messaging_limit?: number | null }

/** A change that stops the channel from sending (account_update): the channel is paused with `reason`. */
export interface AccountPause { kind: 'pause'; at: number | null; reason: string }

/** What an account-level change applies (null when the field or event changes nothing here). */
export type AccountChange = TemplateChange | PhoneQualityChange | AccountPause;

/** What applying a company's account-level changes did. */
export interface AccountResult { templates: number; released: number; paused: number; quality: number; limits: number }

/**
 * Applies account-level changes to one company, in order; run it in a transaction. `now` (ms, the
 * injectable clock) stands in for changes without a time. Idempotent: applying the same changes again
 * changes nothing (the template trigger writes whatsapp.template.updated only for real changes; an
 * already paused channel keeps its first reason).
 */
export async function applyAccountChanges(trx: Db, companyId: number, changes: AccountChange[], now: number): Promise<AccountResult> {
  const out: AccountResult = { templates: 0, released: 0, paused: 0, quality: 0, limits: 0 };
  for (const c of changes) {
    const at = c.at ?? now;
    if (c.kind === 'template') {
      const changed = await updateTemplateFromWebhook(trx, companyId, c.ref, {
        status: c.status, rejected_reason: c.rejected_reason, quality_score: c.quality_score, category: c.category,
      }, at);
      out.templates += changed.length;
      if (changed.some((t) => t.status === 'APPROVED')) out.released += await releaseWaiting(trx, companyId, [WAIT_REASONS.templatePaused], now);
    } else if (c.kind === 'phone_quality') {
      if (c.quality_rating !== undefined) {
        await setQualityRating(trx, companyId, c.quality_rating);
        out.quality++;
      }
      if (c.messaging_limit !== undefined && await setMessagingLimit(trx, companyId, c.messaging_limit)) out.limits++;
    } else if (await pauseChannel(trx, companyId, c.reason, at)) {
      out.paused++;
    }
  }
  return out;
}
