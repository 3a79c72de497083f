/**
 * A WhatsApp channel's state (table `whatsapp_channel_state`, migration 017; docs/whatsapp.md "The
 * channel") and the messages that wait on it. One statement per function; times in ms of the
 * injectable clock.
 *
 * Waiting messages: a message that may not go out yet stays `pending` with `held_until` (when the
 * workers' sweep releases it to be tried again) and `reason` saying what it waits for, one of
 * {@link WAIT_REASONS}. Whatever ends a wait early (a resumed channel, an approved template) releases
 * the company's messages waiting for that reason with {@link releaseWaiting}: they are tried again at
 * once and wait again if the cause is still there.
 */
import { sql } from 'kysely';
import type { Db } from './database.ts';

/** Why a pending message waits (`messages.reason` while `pending`). */
export const WAIT_REASONS = {
  /** The channel is paused (Meta's error or webhook); released by resume. */
  channelPaused: 'channel_paused',
  /** The template is PAUSED by Meta; released when it is approved again. */
  templatePaused: 'template_paused',
  /** The messaging limit's budget of new people is spent; released as the 24 h window moves. */
  messagingLimit: 'messaging_limit',
  /** The pair interval to this recipient has not passed yet (or Meta answered 131056). */
  pairRate: 'pair_rate',
  /** Meta holds marketing messages to this person for now (131049); tried again 24 h later. */
  marketingHeld: 'marketing_held',
} as const;

export type WaitReason = (typeof WAIT_REASONS)[keyof typeof WAIT_REASONS];

/** A channel's state as stored; `active` with nulls when the company has no row. */
export interface ChannelState {
  state: 'active' | 'paused';
  reason: string | null;
  changed_at: Date | null;
  quality_rating: string | null;
}

const iso = (ms: number) => new Date(ms).toISOString();

/** The channel state of `companyId` (active when no row exists). */
export async function channelState(db: Db, companyId: number): Promise<ChannelState> {
  const row = await db.selectFrom('whatsapp_channel_state').select(['state', 'reason', 'changed_at', 'quality_rating'])
    .where('company_id', '=', companyId).executeTakeFirst();
  return row ?? { state: 'active', reason: null, changed_at: null, quality_rating: null };
}

/**
 * Pauses the channel with `reason` at `at` (a `channel.paused` event when it was active, written by
 * the table's trigger). True when this call paused it; an already paused channel keeps its first reason.
 */
export async function pauseChannel(db: Db, companyId: number, reason: string, at: number): Promise<boolean> {
  const { rows } = await sql<{ company_id: number }>`
    INSERT INTO whatsapp_channel_state AS s (company_id, state, reason, changed_at, updated_at)
    VALUES (${companyId}, 'paused', ${reason}, ${iso(at)}::timestamptz, now())
    ON CONFLICT (company_id) DO UPDATE SET state = 'paused', reason = excluded.reason, changed_at = excluded.changed_at, updated_at = now()
    WHERE s.state <> 'paused'
    RETURNING s.company_id`.execute(db);
  return rows.length > 0;
}

/**
 * Sets a paused channel active at `at` (a `channel.resumed` event with `reason`) and releases the
 * messages that waited for it. True when the channel was paused.
 */
export async function resumeChannel(db: Db, companyId: number, reason: string, at: number): Promise<boolean> {
  const { rows } = await sql<{ company_id: number }>`
    UPDATE whatsapp_channel_state SET state = 'active', reason = ${reason}, changed_at = ${iso(at)}::timestamptz, updated_at = now()
    WHERE company_id = ${companyId} AND state = 'paused'
    RETURNING company_id`.execute(db);
  if (rows.length === 0) return false;
  await releaseWaiting(db, companyId, [WAIT_REASONS.channelPaused], at);
  return true;
}

/** Records the quality rating Meta reported for the channel's number (GREEN, YELLOW, RED, ...). */
export async function setQualityRating(db: Db, companyId: number, rating: string | null): Promise<void> {
  await sql`
    INSERT INTO whatsapp_channel_state AS s (company_id, quality_rating, updated_at) VALUES (${companyId}, ${rating}, now())
    ON CONFLICT (company_id) DO UPDATE SET quality_rating = excluded.quality_rating, updated_at = now()`.execute(db);
}

/**
 * Releases the company's pending messages waiting for one of `reasons` (held until later): their
 * `held_until` becomes `at`, so the workers' sweep hands them to a delivery run at once. Returns how
 * many were released.
 */
export async function releaseWaiting(db: Db, companyId: number, reasons: readonly WaitReason[], at: number): Promise<number> {
  const result = await sql`
    UPDATE messages SET held_until = ${iso(at)}::timestamptz, next_attempt_at = NULL, updated_at = now()
    WHERE company_id = ${companyId} AND status = 'pending' AND reason = ANY(${[...reasons]}::text[])
      AND held_until > ${iso(at)}::timestamptz`.execute(db);
  return Number(result.numAffectedRows ?? 0);
}
