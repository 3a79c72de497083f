/**
 * Receipts (docs/decisions.md#7-a-messages-life, #9-whatsapp-webhooks-in, #10-gateway-receipts): what
 * providers post back as the `receipts-apply` job carries it (statuses, inbound messages), and
 * collapsing a payload's statuses into one receipt per message before they are applied set-based
 * (src/db/receipts.ts, job `receipts-apply`).
 *
 * - WhatsApp: Meta's payload is parsed and its signature checked in the provider's room
 *   (src/providers/whatsapp/webhooks.ts) into these shapes.
 * - Gateways (webhook provider): `{"statuses": [{message_id, status, timestamp (RFC 3339), error?}]}`,
 *   signed as Standard Webhooks sign (verified in src/http/webhooks/provider-status.ts).
 * Parsers throw `PayloadError` (→ 400) for a payload of the wrong shape; they never throw anything else.
 */
import { createHash } from 'node:crypto';
import type { ReceiptRow } from '../db/receipts.ts';
import { PayloadError } from './payload-error.ts';

export { PayloadError };

/** Where receipts came from, as the `cms_receipts_total` metric's `source` label: a WhatsApp webhook or a gateway's. */
export type ReceiptSource = 'whatsapp' | 'gateway';

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

/** SHA-256 (lowercase hex) of a verify token, as stored beside the sealed token. */
export function verifyTokenDigest(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown, max = 1024): v is string => typeof v === 'string' && v.length > 0 && v.length <= max;

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
