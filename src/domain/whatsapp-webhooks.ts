/**
 * Meta's account-level webhook fields (docs/whatsapp.md "Webhook fields"): parsing one
 * `entry[].changes[]` of a field other than `messages` into what the service applies, and applying it
 * for one company (job `receipts-apply`, in one transaction).
 *
 * | field | value read | applied |
 * |---|---|---|
 * | message_template_status_update | event, message_template_id, message_template_name, message_template_language, reason | the template's `status` (and `rejected_reason`); APPROVED releases messages waiting with `template_paused` |
 * | message_template_quality_update | new_quality_score + the template | `quality_score` |
 * | template_category_update | new_category + the template | `category` |
 * | phone_number_quality_update | event, max_daily_conversations_per_business or current_limit | the channel's `quality_rating` (FLAGGED / UNFLAGGED) and `messaging_limit` |
 * | account_update | event, ban_info, restriction_info | the channel paused on a ban or a restriction of business-initiated messages |
 * | anything else | — | counted (`cms_whatsapp_webhook_changes_total`), nothing else |
 *
 * A template is found by Meta's id, else by name and language; a template not in the company's copy
 * changes nothing (the next sync brings it). A change older than the copy (its `entry[].time` more than
 * a second before the template's `synced_at`) changes nothing. Parsers throw PayloadError (400) for a
 * payload that names no template or no event; they never throw anything else.
 */
import type { Db } from '../db/database.ts';
import { updateTemplateFromWebhook, setMessagingLimit, type TemplateRef } from '../db/whatsapp-webhooks.ts';
import { pauseChannel, releaseWaiting, setQualityRating, WAIT_REASONS } from '../db/whatsapp-channel.ts';
import { PayloadError } from './payload-error.ts';

/** The account-level fields this service applies. */
export const APPLIED_FIELDS = ['message_template_status_update', 'message_template_quality_update', 'template_category_update', 'phone_number_quality_update', 'account_update'] as const;

/**
 * Meta's WhatsApp Business Account webhook fields, as the metric's `field` label (any other name is
 * counted as `other`, so the label stays bounded whatever a payload says).
 */
export const KNOWN_FIELDS: ReadonlySet<string> = new Set([
  'messages', ...APPLIED_FIELDS,
  'account_alerts', 'account_review_update', 'automatic_events', 'business_capability_update', 'business_status_update',
  'calls', 'campaign_status_update', 'flows', 'history', 'message_echoes', 'message_template_components_update',
  'messaging_handovers', 'partner_solutions', 'payment_configuration_update', 'phone_number_name_update', 'security',
  'smb_app_state_sync', 'smb_message_echoes', 'tracking_events', 'user_preferences',
]);

/** The metric label of a field name: itself when Meta documents it, else `other`. */
export function fieldLabel(field: string): string {
  return KNOWN_FIELDS.has(field) ? field : 'other';
}

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

/** phone_number_quality_update: the quality word to keep (or undefined) and the messaging limit (undefined: unchanged). */
export interface PhoneQualityChange { kind: 'phone_quality'; at: number | null; event: string; quality_rating?: string; messaging_limit?: number | null }

/** account_update that stops the number from sending: the channel is paused with `reason`. */
export interface AccountPause { kind: 'pause'; at: number | null; reason: string }

/** What an account-level change applies (null when the field or event changes nothing here). */
export type AccountChange = TemplateChange | PhoneQualityChange | AccountPause;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const word = (v: unknown, max = 64): v is string => typeof v === 'string' && v.length > 0 && v.length <= max;

/**
 * Template status events that name a status (Meta's `event` is the status, except REINSTATED, which
 * makes the template sendable again: APPROVED). FLAGGED, LOCKED, UNLOCKED, UNARCHIVED and
 * LIMIT_EXCEEDED change no status (the periodic sync keeps the copy right).
 */
const STATUS_OF_EVENT: Readonly<Record<string, string>> = {
  APPROVED: 'APPROVED', REINSTATED: 'APPROVED', REJECTED: 'REJECTED', PENDING: 'PENDING', PAUSED: 'PAUSED',
  DISABLED: 'DISABLED', IN_APPEAL: 'IN_APPEAL', ARCHIVED: 'ARCHIVED', DELETED: 'DELETED', PENDING_DELETION: 'PENDING_DELETION',
};

/**
 * Meta's named messaging limits → `messaging_limit` (250, 2000, 10000, 100000, or null for unlimited):
 * the largest value the service keeps that is not above Meta's. TIER_1K (Meta's former tier, now 2K)
 * becomes 250; TIER_50 and TIER_NOT_SET leave the limit unchanged (undefined).
 */
export const LIMIT_OF_TIER: Readonly<Record<string, number | null>> = {
  TIER_250: 250, TIER_1K: 250, TIER_2K: 2000, TIER_10K: 10_000, TIER_100K: 100_000, TIER_UNLIMITED: null,
};

/** Restrictions that stop the template messages this service sends (account_update ACCOUNT_RESTRICTION). */
const SENDING_RESTRICTIONS = new Set(['RESTRICTED_BIZ_INITIATED_MESSAGING']);

function templateRef(v: Record<string, unknown>, where: string): TemplateRef {
  const raw = v.message_template_id;
  const id = typeof raw === 'number' && Number.isSafeInteger(raw) && raw > 0 ? String(raw)
    : typeof raw === 'string' && /^\d{1,32}$/.test(raw) ? raw : null;
  const name = word(v.message_template_name, 512) ? v.message_template_name : null;
  const language = word(v.message_template_language, 32) ? v.message_template_language : null;
  if (id === null && (name === null || language === null)) {
    throw new PayloadError(`${where} must name the template (message_template_id, or message_template_name and message_template_language)`);
  }
  return { template_id: id, name, language };
}

/**
 * One change of an account-level field → what it applies, or null when it changes nothing here
 * (a field the service does not act on, or an event of no consequence). `at`: `entry[].time` in ms.
 */
export function parseAccountChange(field: string, v: Record<string, unknown>, where: string, at: number | null): AccountChange | null {
  switch (field) {
    case 'message_template_status_update': {
      if (!word(v.event) || !/^[A-Z_]+$/.test(v.event)) throw new PayloadError(`${where}.event must be a template status event`);
      const ref = templateRef(v, where);
      const status = STATUS_OF_EVENT[v.event];
      if (!status) return null;
      const reason = typeof v.reason === 'string' && v.reason !== '' && v.reason !== 'NONE' ? v.reason.slice(0, 1024) : null;
      return { kind: 'template', at, ref, status, rejected_reason: status === 'REJECTED' ? reason : null };
    }
    case 'message_template_quality_update': {
      if (!word(v.new_quality_score)) throw new PayloadError(`${where}.new_quality_score must be a string`);
      return { kind: 'template', at, ref: templateRef(v, where), quality_score: v.new_quality_score };
    }
    case 'template_category_update': {
      const ref = templateRef(v, where);
      // A recategorisation announced for later (correct_category) changes nothing yet.
      if (v.new_category === undefined && word(v.correct_category)) return null;
      if (!word(v.new_category)) throw new PayloadError(`${where}.new_category must be a string`);
      return { kind: 'template', at, ref, category: v.new_category };
    }
    case 'phone_number_quality_update': {
      if (!word(v.event)) throw new PayloadError(`${where}.event must be a string`);
      const tier = word(v.max_daily_conversations_per_business) ? v.max_daily_conversations_per_business
        : word(v.current_limit) ? v.current_limit : undefined;
      const change: PhoneQualityChange = { kind: 'phone_quality', at, event: v.event };
      if (v.event === 'FLAGGED' || v.event === 'UNFLAGGED') change.quality_rating = v.event;
      if (tier !== undefined && tier in LIMIT_OF_TIER) change.messaging_limit = LIMIT_OF_TIER[tier];
      return change.quality_rating === undefined && !('messaging_limit' in change) ? null : change;
    }
    case 'account_update': {
      if (!word(v.event)) throw new PayloadError(`${where}.event must be a string`);
      if (v.event === 'DISABLED_UPDATE') {
        const state = isObject(v.ban_info) && typeof v.ban_info.waba_ban_state === 'string' ? v.ban_info.waba_ban_state : 'DISABLE';
        return state === 'DISABLE' ? { kind: 'pause', at, reason: 'account_update: DISABLED_UPDATE (DISABLE)' } : null;
      }
      if (v.event === 'ACCOUNT_RESTRICTION') {
        const types = Array.isArray(v.restriction_info)
          ? v.restriction_info.filter(isObject).map((r) => r.restriction_type).filter((t): t is string => typeof t === 'string')
          : [];
        const hit = types.find((t) => SENDING_RESTRICTIONS.has(t));
        // A restriction Meta does not name is taken as one that stops sending.
        if (hit || types.length === 0) return { kind: 'pause', at, reason: `account_update: ACCOUNT_RESTRICTION (${hit ?? 'unspecified'})` };
        return null;
      }
      if (v.event === 'ACCOUNT_DELETED') return { kind: 'pause', at, reason: 'account_update: ACCOUNT_DELETED' };
      return null;
    }
    default:
      return null;
  }
}

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
