/**
 * SQL of receipts and inbound messages (docs/decisions.md#7-a-messages-life, #9-whatsapp-webhooks-in, #10-gateway-receipts), one statement per function,
 * set-based: a job's statuses are one UPDATE, its inbound messages one INSERT, its opt-outs one UPDATE.
 * The outbox triggers of migration 008 turn every change made here into its events.
 */
import { sql } from 'kysely';
import type { Db } from './database.ts';
import type { ProviderError } from '../providers/types.ts';

/** A WhatsApp channel as webhooks need it. */
export interface WhatsappChannelRow {
  company_id: number;
  phone_number_id: string;
  app_secret_sealed: string | null;
  /** The channel's WhatsApp Business Account (`channel.waba_id`), null when it was not set. */
  waba_id: string | null;
  default_country: string;
  opt_out_keywords: string[];
  opt_in_keywords: string[];
}

/** The WhatsApp channels owning the given phone_number_ids (unknown ids are simply absent). */
export async function findWhatsappChannels(db: Db, phoneNumberIds: string[]): Promise<WhatsappChannelRow[]> {
  const { rows } = await sql<WhatsappChannelRow>`
    SELECT company_id, channel->>'phone_number_id' AS phone_number_id, channel->>'app_secret_sealed' AS app_secret_sealed,
           channel->>'waba_id' AS waba_id, default_country, opt_out_keywords, opt_in_keywords
    FROM companies
    WHERE channel->>'provider' = 'whatsapp' AND channel->>'phone_number_id' = ANY (${phoneNumberIds}::text[])`.execute(db);
  return rows;
}

/** True when some WhatsApp channel's verify token has this SHA-256 (lowercase hex). */
export async function verifyTokenExists(db: Db, digestHex: string): Promise<boolean> {
  const { rows } = await sql<{ one: number }>`
    SELECT 1 AS one FROM companies
    WHERE channel->>'provider' = 'whatsapp' AND channel->>'verify_token_sha256' = ${digestHex} LIMIT 1`.execute(db);
  return rows.length > 0;
}

/** For gateway receipts: which companies the given message ids (uuids) belong to, with their channels. */
export async function companiesOfMessages(db: Db, messageIds: string[]): Promise<{ company_id: number; n: number; provider: string | null; secret_sealed: string | null }[]> {
  const { rows } = await sql<{ company_id: number; n: number; provider: string | null; secret_sealed: string | null }>`
    SELECT m.company_id, count(*)::int AS n, c.channel->>'provider' AS provider, c.channel->>'secret_sealed' AS secret_sealed
    FROM messages m JOIN companies c ON c.company_id = m.company_id
    WHERE m.message_id = ANY (${messageIds}::uuid[])
    GROUP BY m.company_id, c.channel->>'provider', c.channel->>'secret_sealed'`.execute(db);
  return rows.map((r) => ({ ...r, n: Number(r.n) }));
}

/**
 * One collapsed receipt: the times a message reached delivered / read (ms since the epoch, or null),
 * or its failure. `id` is the provider's id (WhatsApp wamid) or, for gateways, the message id.
 */
export interface ReceiptRow {
  id: string;
  delivered_at: number | null;
  read_at: number | null;
  failed_at: number | null;
  error_code: string | null;
  error: string | null;
  /** The provider's error as given, for a failure (`messages.provider_error`); null keeps none. */
  provider_error?: ProviderError | null;
}

/** What became of one receipt: `known` (a message of the company has that id), `applied` (it changed). */
export interface ReceiptOutcome { id: string; known: boolean; applied: boolean }

/**
 * Applies receipts to the company's messages, forward only (§1), in one statement:
 * sent → delivered → read (a `read` sets `delivered_at` too when missing; a `delivered` after `read`
 * changes nothing); `failed` only from `sent` and only when the receipt has no delivered/read;
 * failed / skipped / pending messages never change. `by` picks the lookup column:
 * `provider_message_id` (WhatsApp) or `message_id` (gateways; ids must be uuids).
 */
export async function applyReceipts(db: Db, companyId: number, by: 'provider_message_id' | 'message_id', rows: ReceiptRow[]): Promise<ReceiptOutcome[]> {
  if (rows.length === 0) return [];
  const ids = rows.map((r) => r.id);
  const ts = (v: number | null) => (v === null ? null : new Date(v).toISOString());
  const delivered = rows.map((r) => ts(r.delivered_at));
  const read = rows.map((r) => ts(r.read_at));
  const failed = rows.map((r) => ts(r.failed_at));
  const codes = rows.map((r) => r.error_code);
  const errors = rows.map((r) => r.error);
  const providerErrors = rows.map((r) => (r.provider_error ? JSON.stringify(r.provider_error) : null));
  const match = by === 'message_id' ? sql`m.message_id = i.id::uuid` : sql`m.provider_message_id = i.id`;
  const { rows: out } = await sql<ReceiptOutcome>`
    WITH i AS (
      SELECT * FROM unnest(${ids}::text[], ${delivered}::timestamptz[], ${read}::timestamptz[], ${failed}::timestamptz[], ${codes}::text[], ${errors}::text[],
          ${providerErrors}::jsonb[])
        AS t(id, delivered_at, read_at, failed_at, error_code, error, provider_error)
    ), hit AS (
      SELECT m.message_id, i.*,
        CASE WHEN i.read_at IS NOT NULL THEN 3 WHEN i.delivered_at IS NOT NULL THEN 2 ELSE 0 END AS rank_in
      FROM i JOIN messages m ON ${match} AND m.company_id = ${companyId}
    ), upd AS (
      UPDATE messages x SET
        status = CASE WHEN h.rank_in = 0 THEN 'failed' WHEN h.rank_in = 3 THEN 'read' ELSE 'delivered' END,
        delivered_at = CASE WHEN h.rank_in = 0 THEN x.delivered_at ELSE coalesce(x.delivered_at, h.delivered_at, h.read_at) END,
        read_at = CASE WHEN h.rank_in = 3 THEN coalesce(x.read_at, h.read_at) ELSE x.read_at END,
        failed_at = CASE WHEN h.rank_in = 0 THEN h.failed_at ELSE x.failed_at END,
        error_code = CASE WHEN h.rank_in = 0 THEN h.error_code ELSE x.error_code END,
        error = CASE WHEN h.rank_in = 0 THEN coalesce(h.error, 'failed') ELSE x.error END,
        provider_error = CASE WHEN h.rank_in = 0 THEN h.provider_error ELSE x.provider_error END,
        updated_at = now()
      FROM hit h
      WHERE x.message_id = h.message_id AND (
        (h.rank_in = 0 AND h.failed_at IS NOT NULL AND x.status = 'sent')
        OR (h.rank_in > 0 AND x.status IN ('sent', 'delivered', 'read')
            AND h.rank_in > CASE x.status WHEN 'sent' THEN 1 WHEN 'delivered' THEN 2 ELSE 3 END))
      RETURNING x.message_id
    )
    SELECT i.id, (h.message_id IS NOT NULL) AS known, (u.message_id IS NOT NULL) AS applied
    FROM i LEFT JOIN hit h ON h.id = i.id LEFT JOIN upd u ON u.message_id = h.message_id`.execute(db);
  return out;
}

/** One inbound message to store (contact already written). `received_at` in ms. */
export interface InboundRow {
  contact_id: number;
  provider_message_id: string;
  type: string;
  text: string | null;
  payload: string | null;
  received_at: number;
  /** The provider id of the message it answers (context.id, or the message reacted to). */
  reply_to_provider_message_id?: string | null;
  reaction?: Record<string, unknown> | null;
  media?: Record<string, unknown> | null;
  location?: Record<string, unknown> | null;
}

/** Stores inbound messages once per provider id; returns the provider ids newly stored. */
export async function insertInbound(db: Db, companyId: number, rows: InboundRow[]): Promise<string[]> {
  if (rows.length === 0) return [];
  const json = (v: Record<string, unknown> | null | undefined) => (v ? JSON.stringify(v) : null);
  const { rows: out } = await sql<{ provider_message_id: string }>`
    INSERT INTO inbound_messages (company_id, contact_id, provider_message_id, type, text, payload, received_at,
                                  reply_to_provider_message_id, reaction, media, location)
    SELECT ${companyId}, t.contact_id, t.pid, t.type, t.text, t.payload, t.at, t.reply_to, t.reaction::jsonb, t.media::jsonb, t.location::jsonb
    FROM unnest(${rows.map((r) => r.contact_id)}::bigint[], ${rows.map((r) => r.provider_message_id)}::text[],
                ${rows.map((r) => r.type)}::text[], ${rows.map((r) => r.text)}::text[], ${rows.map((r) => r.payload)}::text[],
                ${rows.map((r) => new Date(r.received_at).toISOString())}::timestamptz[],
                ${rows.map((r) => r.reply_to_provider_message_id ?? null)}::text[], ${rows.map((r) => json(r.reaction))}::text[],
                ${rows.map((r) => json(r.media))}::text[], ${rows.map((r) => json(r.location))}::text[])
      AS t(contact_id, pid, type, text, payload, at, reply_to, reaction, media, location)
    ON CONFLICT (company_id, provider_message_id) DO NOTHING
    RETURNING provider_message_id`.execute(db);
  return out.map((r) => r.provider_message_id);
}

/** What an inbound message tells about its sender: when it wrote (ms) and its WhatsApp profile name. */
export interface InboundSender { contact_id: number; at: number; name: string | null }

/**
 * Per contact: `last_inbound_at` becomes its latest inbound time (never earlier than before), and an
 * empty (NULL or '') `first_name` takes the profile name. One statement for all of them.
 */
export async function touchInboundSenders(db: Db, companyId: number, senders: InboundSender[]): Promise<void> {
  if (senders.length === 0) return;
  await sql`
    UPDATE contacts c SET
      last_inbound_at = CASE WHEN c.last_inbound_at IS NULL OR c.last_inbound_at < t.at THEN t.at ELSE c.last_inbound_at END,
      first_name = CASE WHEN coalesce(c.first_name, '') = '' AND t.name IS NOT NULL THEN t.name ELSE c.first_name END,
      updated_at = now()
    FROM (SELECT x.contact_id, max(x.at) AS at, max(x.name) AS name
          FROM unnest(${senders.map((r) => r.contact_id)}::bigint[], ${senders.map((r) => new Date(r.at).toISOString())}::timestamptz[],
                      ${senders.map((r) => r.name)}::text[]) AS x(contact_id, at, name)
          GROUP BY x.contact_id) t
    WHERE c.company_id = ${companyId} AND c.contact_id = t.contact_id`.execute(db);
}

/** One keyword opt-out / opt-in: the contact's new state, when its message was sent (ms), and what proves it. */
export interface OptChange { contact_id: number; opted_out: boolean; at: number; evidence?: Record<string, unknown> }

/**
 * Sets contacts' opt-out state from keywords (`opt_out_source = 'keyword'`, `opt_out_evidence` the
 * change's evidence, copied into the consent ledger by the contacts trigger), only where it changes and
 * only when the keyword is not older than the state's last change (an old STOP delivered late does not
 * undo a newer START). Returns the contact ids changed.
 */
export async function applyOptChanges(db: Db, companyId: number, changes: OptChange[]): Promise<number[]> {
  if (changes.length === 0) return [];
  const { rows } = await sql<{ contact_id: number }>`
    UPDATE contacts c SET opted_out = t.opted_out, opt_out_source = 'keyword', opt_out_at = t.at, opt_out_evidence = t.evidence, updated_at = now()
    FROM unnest(${changes.map((c) => c.contact_id)}::bigint[], ${changes.map((c) => c.opted_out)}::bool[],
                ${changes.map((c) => new Date(c.at).toISOString())}::timestamptz[],
                ${changes.map((c) => (c.evidence ? JSON.stringify(c.evidence) : null))}::jsonb[]) AS t(contact_id, opted_out, at, evidence)
    WHERE c.company_id = ${companyId} AND c.contact_id = t.contact_id AND c.opted_out <> t.opted_out
      AND (c.opt_out_at IS NULL OR c.opt_out_at <= t.at)
    RETURNING c.contact_id`.execute(db);
  return rows.map((r) => Number(r.contact_id));
}

/** The company fields inbound handling needs (default country, keywords); undefined when unknown. */
export async function companyForInbound(db: Db, companyId: number) {
  return db.selectFrom('companies').select(['company_id', 'default_country', 'opt_out_keywords', 'opt_in_keywords'])
    .where('company_id', '=', companyId).executeTakeFirst();
}
