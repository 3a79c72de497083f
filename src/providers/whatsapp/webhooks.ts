/**
 * Meta's webhook payload (docs/decisions.md#9-whatsapp-webhooks-in; docs/whatsapp.md "Webhook fields"):
 * `{object: "whatsapp_business_account", entry: [{id, time, changes: [{field, value}]}]}`, signed
 * `X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the raw body with the app secret>`
 * ({@link verifyHubSignature}), parsed into its changes ({@link parseWhatsappPayload}): statuses and
 * inbound messages of a phone number (field `messages`), and the account-level fields, parsed into
 * the provider-neutral changes of src/domain/channel-changes.ts:
 *
 * | field | value read | change |
 * |---|---|---|
 * | message_template_status_update | event, message_template_id, message_template_name, message_template_language, reason | `template`: status (and rejected_reason) |
 * | message_template_quality_update | new_quality_score + the template | `template`: quality_score |
 * | template_category_update | new_category + the template | `template`: category |
 * | phone_number_quality_update | event, max_daily_conversations_per_business or current_limit | `phone_quality`: quality_rating (FLAGGED / UNFLAGGED) and messaging_limit |
 * | account_update | event, ban_info, restriction_info | `pause` on a ban or a restriction of business-initiated messages |
 * | anything else | — | counted (`cms_whatsapp_webhook_changes_total`), nothing else |
 *
 * Parsers throw PayloadError (400) for a payload of the wrong shape (a change that names no template or
 * no event included); they never throw anything else.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { AccountChange, PhoneQualityChange } from '../../domain/channel-changes.ts';
import { PayloadError } from '../../domain/payload-error.ts';
import type { InboundItem, StatusItem } from '../../domain/receipts.ts';
import type { TemplateRef } from '../../db/whatsapp-webhooks.ts';

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

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


/**
 * One `entry[].changes[]` of a WhatsApp payload. A change whose value names a phone number
 * (`metadata.phone_number_id`) belongs to that number's channel; any other (account-level fields:
 * templates, quality, account_update, ...) to the channels of the WhatsApp Business Account
 * `entry[].id`.
 */
export interface WhatsappChange {
  /** Meta's `field` (`messages` when absent). */
  field: string;
  phoneNumberId?: string;
  /**
   * The WABA id of the change's entry (`entry[].id`, digits): for an account-level change the WABA it
   * belongs to; for a change naming a phone number, the WABA that number must belong to (absent when
   * the entry has no id).
   */
  wabaId?: string;
  statuses: StatusItem[];
  messages: InboundItem[];
  /** What an account-level change applies (undefined: nothing here). */
  account?: AccountChange;
}

/** True when `header` is `sha256=<hex>` and equals the HMAC-SHA256 of `raw` with `secret` (constant time). */
export function verifyHubSignature(raw: Buffer, header: string | undefined, secret: string): boolean {
  if (typeof header !== 'string') return false;
  const m = /^sha256=([0-9a-fA-F]{64})$/.exec(header.trim());
  if (!m) return false;
  const expected = createHmac('sha256', secret).update(raw).digest();
  return timingSafeEqual(Buffer.from(m[1], 'hex'), expected);
}

const str = (v: unknown, max = 1024): v is string => typeof v === 'string' && v.length > 0 && v.length <= max;
const KNOWN_STATUS = new Set(['sent', 'delivered', 'read', 'failed']);

/** 9999-12-31T23:59:59Z in unix seconds. */
const MAX_UNIX_SECONDS = 253_402_300_799;

/** Unix seconds (Meta sends a decimal string; a number is taken too) → ms; PayloadError otherwise. */
function unixMs(v: unknown, where: string): number {
  const s = typeof v === 'number' ? String(v) : v;
  // Up to the end of year 9999 (what PostgreSQL's timestamptz input and RFC 3339 can both write).
  if (typeof s !== 'string' || !/^\d{1,12}$/.test(s) || Number(s) > MAX_UNIX_SECONDS) throw new PayloadError(`${where}.timestamp must be unix seconds`);
  return Number(s) * 1000;
}

/** A text field of a message, bounded (inbound texts are at most 4096 characters on WhatsApp). */
function text(v: unknown): string | null {
  return typeof v === 'string' ? v.slice(0, 4096) : null;
}

/** One `statuses[]` item → StatusItem, or null for a status this service does not track. */
function parseStatus(s: unknown, where: string): StatusItem | null {
  if (!isObject(s)) throw new PayloadError(`${where} must be an object`);
  if (!str(s.id, 512)) throw new PayloadError(`${where}.id must be a string`);
  if (typeof s.status !== 'string') throw new PayloadError(`${where}.status must be a string`);
  const at = unixMs(s.timestamp, where);
  if (!KNOWN_STATUS.has(s.status)) return null;
  const item: StatusItem = { id: s.id, status: s.status as StatusItem['status'], at };
  if (s.status === 'failed' && Array.isArray(s.errors) && isObject(s.errors[0])) {
    const e = s.errors[0];
    if (typeof e.code === 'number' || typeof e.code === 'string') item.code = String(e.code).slice(0, 64);
    const title = typeof e.title === 'string' ? e.title : typeof e.message === 'string' ? e.message : undefined;
    if (title) item.title = title.slice(0, 1024);
    if (typeof e.message === 'string') item.message = e.message.slice(0, 1024);
    if (isObject(e.error_data) && typeof e.error_data.details === 'string') item.details = e.error_data.details.slice(0, 1024);
  }
  return item;
}

/** One `messages[]` item → InboundItem (text body, button payload, interactive reply id + title). */
function parseMessage(m: unknown, where: string): InboundItem {
  if (!isObject(m)) throw new PayloadError(`${where} must be an object`);
  if (!str(m.from, 32) || !/^\d+$/.test(m.from)) throw new PayloadError(`${where}.from must be digits`);
  if (!str(m.id, 512)) throw new PayloadError(`${where}.id must be a string`);
  if (!str(m.type, 64)) throw new PayloadError(`${where}.type must be a string`);
  const at = unixMs(m.timestamp, where);
  let body: string | null = null;
  let payload: string | null = null;
  if (m.type === 'text' && isObject(m.text)) body = text(m.text.body);
  else if (m.type === 'button' && isObject(m.button)) {
    payload = text(m.button.payload);
    body = text(m.button.text);
  } else if (m.type === 'interactive' && isObject(m.interactive)) {
    const reply = isObject(m.interactive.button_reply) ? m.interactive.button_reply : isObject(m.interactive.list_reply) ? m.interactive.list_reply : undefined;
    if (reply) {
      payload = text(reply.id);
      body = text(reply.title);
    }
  } else if (isObject(m[m.type]) && typeof (m[m.type] as Record<string, unknown>).caption === 'string') {
    body = text((m[m.type] as Record<string, unknown>).caption);
  }
  const item: InboundItem = { from: m.from, id: m.id, at, type: m.type, text: body, payload };
  if (isObject(m.context) && str(m.context.id, 512)) item.reply_to = m.context.id;
  if (m.type === 'reaction' && isObject(m.reaction) && str(m.reaction.message_id, 512)) {
    item.reaction = { provider_message_id: m.reaction.message_id };
    if (str(m.reaction.emoji, 64)) item.reaction.emoji = m.reaction.emoji;
    item.reply_to ??= m.reaction.message_id;
  }
  if (MEDIA_TYPES.has(m.type) && isObject(m[m.type])) {
    const media = m[m.type] as Record<string, unknown>;
    if (str(media.id, 256)) {
      item.media = { id: media.id };
      if (str(media.mime_type, 255)) item.media.mime_type = media.mime_type;
      if (str(media.sha256, 128)) item.media.sha256 = media.sha256;
      if (str(media.filename, 1024)) item.media.filename = media.filename;
    }
  }
  if (m.type === 'location' && isObject(m.location)) {
    const l = m.location;
    const lat = Number(l.latitude);
    const lon = Number(l.longitude);
    if ((typeof l.latitude === 'number' || typeof l.latitude === 'string') && (typeof l.longitude === 'number' || typeof l.longitude === 'string')
      && Number.isFinite(lat) && Number.isFinite(lon) && Math.abs(lat) <= 90 && Math.abs(lon) <= 180) {
      item.location = { latitude: lat, longitude: lon };
      if (str(l.name, 1024)) item.location.name = l.name;
      if (str(l.address, 1024)) item.location.address = l.address;
      if (str(l.url, 2048)) item.location.url = l.url;
    }
  }
  return item;
}

/** Inbound message types whose object carries a media id. */
const MEDIA_TYPES = new Set(['image', 'video', 'audio', 'document', 'sticker']);

/** `contacts[]` of a messages change → profile name by wa_id (trimmed, at most 255 characters). */
function profileNames(contacts: unknown): Map<string, string> {
  const names = new Map<string, string>();
  if (!Array.isArray(contacts)) return names;
  for (const c of contacts) {
    if (!isObject(c) || typeof c.wa_id !== 'string' || !isObject(c.profile) || typeof c.profile.name !== 'string') continue;
    const name = c.profile.name.trim().slice(0, 255);
    if (name) names.set(c.wa_id, name);
  }
  return names;
}

/**
 * Parses Meta's webhook payload into its changes, one per `entry[].changes[]`. A change whose value
 * has `metadata` must name a phone number (digits) and is that number's (statuses and messages are
 * read, and the entry's WABA id, when given, is kept to be checked against the number's channel); any
 * other needs the entry's WABA id (`entry[].id`, digits) and is parsed by its `field`
 * ({@link parseAccountChange}). Throws PayloadError when it is not a WhatsApp Business payload of
 * the documented shape, or a change cannot be routed.
 */
export function parseWhatsappPayload(body: unknown): WhatsappChange[] {
  if (!isObject(body)) throw new PayloadError('body must be a JSON object');
  if (body.object !== 'whatsapp_business_account') throw new PayloadError('object must be "whatsapp_business_account"');
  if (!Array.isArray(body.entry) || body.entry.length === 0) throw new PayloadError('entry must be a non-empty array');
  const out: WhatsappChange[] = [];
  body.entry.forEach((entry, e) => {
    if (!isObject(entry) || !Array.isArray(entry.changes)) throw new PayloadError(`entry[${e}].changes must be an array`);
    if (entry.id !== undefined && (!str(entry.id, 32) || !/^\d+$/.test(entry.id))) throw new PayloadError(`entry[${e}].id must be the digits of a WhatsApp Business Account`);
    const entryWaba = entry.id as string | undefined;
    const at = typeof entry.time === 'number' && Number.isSafeInteger(entry.time) && entry.time > 0 && entry.time <= MAX_UNIX_SECONDS ? entry.time * 1000 : null;
    entry.changes.forEach((change, c) => {
      const where = `entry[${e}].changes[${c}].value`;
      if (!isObject(change) || !isObject(change.value)) throw new PayloadError(`${where} must be an object`);
      if (change.field !== undefined && (typeof change.field !== 'string' || !/^[a-z0-9_]{1,64}$/.test(change.field))) {
        throw new PayloadError(`entry[${e}].changes[${c}].field must be a field name`);
      }
      const v = change.value;
      const field = (change.field as string | undefined) ?? 'messages';
      if (v.metadata !== undefined || field === 'messages') {
        if (!isObject(v.metadata) || !str(v.metadata.phone_number_id, 32) || !/^\d+$/.test(v.metadata.phone_number_id)) {
          throw new PayloadError(`${where}.metadata.phone_number_id must be digits`);
        }
        if (v.statuses !== undefined && !Array.isArray(v.statuses)) throw new PayloadError(`${where}.statuses must be an array`);
        if (v.messages !== undefined && !Array.isArray(v.messages)) throw new PayloadError(`${where}.messages must be an array`);
        const applies = field === 'messages';
        const statuses = applies ? ((v.statuses ?? []) as unknown[]).map((s, i) => parseStatus(s, `${where}.statuses[${i}]`)).filter((s): s is StatusItem => s !== null) : [];
        const names = applies ? profileNames(v.contacts) : new Map<string, string>();
        const messages = applies ? ((v.messages ?? []) as unknown[]).map((m, i) => {
          const item = parseMessage(m, `${where}.messages[${i}]`);
          const name = names.get(item.from);
          if (name) item.name = name;
          return item;
        }) : [];
        out.push({ field, phoneNumberId: v.metadata.phone_number_id, ...(entryWaba !== undefined ? { wabaId: entryWaba } : {}), statuses, messages });
        return;
      }
      if (!str(entry.id, 32) || !/^\d+$/.test(entry.id)) throw new PayloadError(`entry[${e}].id must be the digits of a WhatsApp Business Account`);
      const account = parseAccountChange(field, v, where, at) ?? undefined;
      out.push({ field, wabaId: entry.id, statuses: [], messages: [], ...(account ? { account } : {}) });
    });
  });
  if (out.length === 0) throw new PayloadError('the payload names no phone_number_id');
  return out;
}

