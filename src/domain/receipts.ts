/**
 * Receipts (docs/decisions.md#7-a-messages-life, #9-whatsapp-webhooks-in, #10-gateway-receipts): parsing and checking what providers post back, and
 * collapsing a payload's statuses into one receipt per message before they are applied set-based
 * (src/db/receipts.ts, job `receipts-apply`).
 *
 * - WhatsApp: Meta's payload `{object: "whatsapp_business_account", entry: [{changes: [{value:
 *   {metadata: {phone_number_id}, statuses?: [...], messages?: [...], contacts?: [...]}}]}]}`, signed
 *   `X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the raw body with the app secret>`.
 * - Gateways (webhook provider): `{"statuses": [{message_id, status, timestamp (RFC 3339), error?}]}`,
 *   signed as Standard Webhooks sign (verified in src/http/webhooks/provider-status.ts).
 * Parsers throw `PayloadError` (→ 400) for a payload of the wrong shape; they never throw anything else.
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { ReceiptRow } from '../db/receipts.ts';
import { PayloadError } from './payload-error.ts';
import { parseAccountChange, type AccountChange } from './whatsapp-webhooks.ts';

export { PayloadError };

/** One status as the `receipts-apply` job carries it. `at` in ms since the epoch. */
export interface StatusItem {
  id: string;
  status: 'sent' | 'delivered' | 'read' | 'failed';
  at: number;
  code?: string;
  title?: string;
  /** Meta's `message` and `error_data.details` of a failed WhatsApp status (kept in `provider_error`). */
  message?: string;
  details?: string;
}

/** One inbound message as the job carries it. `from`: the sender's digits as WhatsApp sends them (no +). */
export interface InboundItem {
  from: string;
  id: string;
  at: number;
  type: string;
  text: string | null;
  payload: string | null;
  /** The sender's WhatsApp profile name (`contacts[].profile.name` of its `wa_id`), trimmed. */
  name?: string;
  /** The provider id of the message this one answers (`context.id`; a reaction's `message_id`). */
  reply_to?: string;
  /** A reaction: its emoji (absent: the reaction was removed) and the message reacted to. */
  reaction?: { emoji?: string; provider_message_id: string };
  /** An image, video, audio, document or sticker: Meta's media id and MIME type (the caption is `text`). */
  media?: { id: string; mime_type?: string; sha256?: string; filename?: string };
  /** A shared location. */
  location?: { latitude: number; longitude: number; name?: string; address?: string; url?: string };
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

/** SHA-256 (lowercase hex) of a verify token, as stored beside the sealed token. */
export function verifyTokenDigest(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/** True when `header` is `sha256=<hex>` and equals the HMAC-SHA256 of `raw` with `secret` (constant time). */
export function verifyHubSignature(raw: Buffer, header: string | undefined, secret: string): boolean {
  if (typeof header !== 'string') return false;
  const m = /^sha256=([0-9a-fA-F]{64})$/.exec(header.trim());
  if (!m) return false;
  const expected = createHmac('sha256', secret).update(raw).digest();
  return timingSafeEqual(Buffer.from(m[1], 'hex'), expected);
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
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
 * (src/domain/whatsapp-webhooks.ts). Throws PayloadError when it is not a WhatsApp Business payload of
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

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})$/;

/** True when `id` is a message id of this service (a uuid). */
export function isMessageId(id: string): boolean {
  return UUID.test(id);
}

/**
 * Parses a gateway's `{"statuses":[{message_id, status: delivered|read|failed, timestamp: RFC 3339,
 * error?: {code, title}}]}` (§4); at least one status. Throws PayloadError otherwise.
 */
export function parseGatewayPayload(body: unknown): StatusItem[] {
  if (!isObject(body) || !Array.isArray(body.statuses) || body.statuses.length === 0) throw new PayloadError('statuses must be a non-empty array');
  return body.statuses.map((s, i) => {
    const where = `statuses[${i}]`;
    if (!isObject(s)) throw new PayloadError(`${where} must be an object`);
    if (!str(s.message_id, 64)) throw new PayloadError(`${where}.message_id must be a string`);
    if (s.status !== 'delivered' && s.status !== 'read' && s.status !== 'failed') throw new PayloadError(`${where}.status must be delivered, read or failed`);
    const at = typeof s.timestamp === 'string' && RFC3339.test(s.timestamp) ? Date.parse(s.timestamp) : NaN;
    if (!Number.isFinite(at)) throw new PayloadError(`${where}.timestamp must be an RFC 3339 time`);
    const item: StatusItem = { id: s.message_id, status: s.status, at };
    if (s.error !== undefined && s.error !== null) {
      if (!isObject(s.error)) throw new PayloadError(`${where}.error must be an object`);
      if (s.error.code !== undefined) item.code = String(s.error.code).slice(0, 64);
      if (typeof s.error.title === 'string') item.title = s.error.title.slice(0, 1024);
    }
    return item;
  });
}

/** A message's collapsed receipt: the row `applyReceipts` (src/db/receipts.ts) applies. */
export type CollapsedReceipt = ReceiptRow;

/**
 * Collapses the statuses of one payload into one receipt per id: the earliest delivered and read
 * times, the first failure. `sent` statuses carry nothing the sender has not stored and are dropped.
 */
export function collapseStatuses(items: StatusItem[]): CollapsedReceipt[] {
  const byId = new Map<string, CollapsedReceipt>();
  for (const s of items) {
    if (s.status === 'sent') continue;
    let r = byId.get(s.id);
    if (!r) byId.set(s.id, (r = { id: s.id, delivered_at: null, read_at: null, failed_at: null, error_code: null, error: null, provider_error: null }));
    const min = (a: number | null, b: number) => (a === null ? b : Math.min(a, b));
    if (s.status === 'delivered') r.delivered_at = min(r.delivered_at, s.at);
    else if (s.status === 'read') r.read_at = min(r.read_at, s.at);
    else if (s.status === 'failed' && r.failed_at === null) {
      r.failed_at = s.at;
      r.error_code = s.code ?? null;
      r.error = s.title ?? null;
      // The provider's error as given (docs/whatsapp.md): code, title, message, details.
      if (s.code !== undefined) r.provider_error = { code: s.code, title: s.title ?? null, message: s.message ?? null, details: s.details ?? null };
    }
  }
  return [...byId.values()];
}
