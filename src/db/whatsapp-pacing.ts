/**
 * SQL of WhatsApp pacing (docs/whatsapp.md "Pacing and limits"; tables of migration 017): the number's
 * throughput slots (`whatsapp_channel_state.next_slot_at` / `slowed_until`, database time), the pair
 * rate (`whatsapp_pairs`) and the messaging limit (`whatsapp_limit_counts`), the last two in ms of the
 * service's injectable clock. One statement per function; the module that uses them is
 * src/providers/whatsapp/pacing.ts.
 */
import { sql } from 'kysely';
import type { Db } from './database.ts';

/** The moving window of the messaging limit and of the customer-service window (ms). */
export const DAY_MS = 24 * 3600_000;

const iso = (ms: number) => new Date(ms).toISOString();

/** A block of throughput slots: `n` slots `spacingMs` apart from `startMs`, and the database's time when it was taken. */
export interface SlotBlock {
  /** Database time (ms since the epoch) of the first slot. */
  startMs: number;
  /** Spacing actually used (ms): twice the asked spacing while the number is slowed down. */
  spacingMs: number;
  n: number;
  /** clock_timestamp() when the statement answered (ms since the epoch). */
  dbNowMs: number;
  /** The channel's stored state as the reservation found it, its reason, and `changed_at` (ms, null when never changed). */
  state: 'active' | 'paused';
  reason: string | null;
  changedMs: number | null;
}

/**
 * Reserves the company's next `n` throughput slots `spacingMs` apart (doubled while `slowed_until` is
 * ahead), from `max(next_slot_at, clock_timestamp())`, and moves `next_slot_at` past them; creates the
 * company's channel-state row when it has none. The row lock orders concurrent reservations of any
 * number of processes, and the clock is read after the lock is held, so blocks never overlap. Answers
 * the channel's stored state with the block (a paused channel's slots are not used: pacing.ts).
 */
export async function reserveSlots(db: Db, companyId: number, n: number, spacingMs: number): Promise<SlotBlock> {
  const { rows } = await sql<{ end_ms: number; factor: number; db_now: number; state: 'active' | 'paused'; reason: string | null; changed_ms: number | null }>`
    INSERT INTO whatsapp_channel_state AS s (company_id, next_slot_at)
    VALUES (${companyId}, clock_timestamp() + make_interval(secs => ${n}::int * ${spacingMs}::float8 / 1000))
    ON CONFLICT (company_id) DO UPDATE SET next_slot_at = greatest(s.next_slot_at, clock_timestamp())
      + make_interval(secs => ${n}::int * ${spacingMs}::float8 * (CASE WHEN s.slowed_until > clock_timestamp() THEN 2 ELSE 1 END) / 1000)
    RETURNING (extract(epoch FROM s.next_slot_at) * 1000)::float8 AS end_ms,
              (CASE WHEN s.slowed_until > clock_timestamp() THEN 2 ELSE 1 END)::int AS factor,
              (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS db_now,
              s.state, s.reason, (extract(epoch FROM s.changed_at) * 1000)::float8 AS changed_ms`.execute(db);
  const r = rows[0];
  const spacing = spacingMs * Number(r.factor);
  return {
    startMs: Number(r.end_ms) - n * spacing, spacingMs: spacing, n, dbNowMs: Number(r.db_now),
    state: r.state === 'paused' ? 'paused' : 'active', reason: r.reason, changedMs: r.changed_ms === null ? null : Number(r.changed_ms),
  };
}

/**
 * Slows the company's number down for `forMs` from now (database time): reservations use twice the
 * spacing until then. A longer slow-down already in place is kept.
 */
export async function slowNumber(db: Db, companyId: number, forMs: number): Promise<void> {
  await sql`
    INSERT INTO whatsapp_channel_state AS s (company_id, slowed_until)
    VALUES (${companyId}, clock_timestamp() + make_interval(secs => ${forMs}::float8 / 1000))
    ON CONFLICT (company_id) DO UPDATE SET slowed_until = greatest(s.slowed_until, excluded.slowed_until)`.execute(db);
}

/**
 * Locks the company's channel-state row until the end of the transaction `db` (creating the row when
 * missing): admissions of one company, from any process, are decided one after the other.
 */
export async function lockChannelState(db: Db, companyId: number): Promise<void> {
  await sql`
    INSERT INTO whatsapp_channel_state AS s (company_id) VALUES (${companyId})
    ON CONFLICT (company_id) DO UPDATE SET company_id = s.company_id`.execute(db);
}

/** How long (ms) a message waits whose budget is kept for earlier messages of its batch before it is looked at again. */
export const RESERVE_RECHECK_MS = 30_000;

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** One decision of {@link decideAdmissions}: `reason` null when admitted; `until_ms` when not. */
export interface AdmissionRow { message_id: string; reason: 'pair_rate' | 'messaging_limit' | null; until_ms: number | null }

/**
 * Decides, at `now` (clock ms), which of the messages (`messageIds[i]` to `recipients[i]`, E.164) may
 * be sent, and takes the pair slots and limit budget of the admitted ones; run it inside a transaction
 * that holds {@link lockChannelState}.
 *
 * - Pair rate: a recipient whose `whatsapp_pairs.next_at` is after `now` waits, until then or at most
 *   one interval (a claim of a message not sent yet ends when it is sent: the wait is tried again);
 *   of several messages to one recipient in the call the first may go, the k-th waits (k-1)
 *   intervals. An admitted message claims the pair (`claimed_by`, migration 021) until
 *   `now + intervalMs + claimMs`; {@link confirmPairs} sets it to `sent + intervalMs` when the
 *   request starts. A message admitted again while its own claim holds (its run stopped before the
 *   request) is not held by it.
 * - Messaging limit (`limit` null: none, nothing is counted): a recipient counted in the last 24 h, or
 *   whose contact (company, phone) has `last_inbound_at` in the last 24 h (window open), goes without
 *   counting. Others are counted (`counted_at = now`) in call order while `limit` minus the people
 *   counted in the last 24 h lasts; the rest wait until the oldest count leaves the 24 h window.
 * - List order (docs/whatsapp.md "Pacing and limits", "The messaging limit's order"): the budget goes to a batch's messages
 *   in `seq` order. The messages of the call's batches (`messageIds` that are message uuids) still
 *   `pending` with a lower `seq` than the call's first message needing budget, and needing budget
 *   themselves (not counted, window closed), are served first: the call's new people get only what
 *   the budget has left beyond them (counted up to the budget, so the look is bounded). A message the
 *   budget would have taken but earlier ones come first waits at most {@link RESERVE_RECHECK_MS}
 *   and is looked at again.
 */
export async function decideAdmissions(db: Db, companyId: number, now: number, intervalMs: number, claimMs: number, limit: number | null,
  messageIds: string[], recipients: string[]): Promise<AdmissionRow[]> {
  const t = iso(now);
  const uuids = messageIds.map((id) => (UUID_RE.test(id) ? id : null));
  const { rows } = await sql<AdmissionRow>`
    WITH items AS (
      SELECT i.message_id, i.recipient, i.ord, i.mid,
             row_number() OVER (PARTITION BY i.recipient ORDER BY i.ord) AS nth
      FROM unnest(${messageIds}::text[], ${recipients}::text[], ${uuids}::uuid[]) WITH ORDINALITY AS i(message_id, recipient, mid, ord)
    ), facts AS (
      SELECT it.message_id, it.recipient, it.ord, it.nth, p.next_at AS pair_next, m.batch_id, m.seq,
             (it.nth = 1 AND (p.next_at IS NULL OR p.next_at <= ${t}::timestamptz OR p.claimed_by IS NOT DISTINCT FROM it.message_id)) AS pair_free,
             (${limit}::int IS NULL
               OR coalesce(lc.counted_at > ${t}::timestamptz - interval '24 hours', false)
               OR coalesce(c.last_inbound_at > ${t}::timestamptz - interval '24 hours', false)) AS free_of_limit
      FROM items it
      LEFT JOIN whatsapp_pairs p ON p.company_id = ${companyId} AND p.recipient = it.recipient
      LEFT JOIN whatsapp_limit_counts lc ON lc.company_id = ${companyId} AND lc.recipient = it.recipient
      LEFT JOIN contacts c ON c.company_id = ${companyId} AND c.phone = it.recipient
      LEFT JOIN messages m ON m.message_id = it.mid
    ), budget AS (
      SELECT ${limit}::int - count(*)::int AS left_, min(counted_at) AS oldest
      FROM whatsapp_limit_counts
      WHERE ${limit}::int IS NOT NULL AND company_id = ${companyId} AND counted_at > ${t}::timestamptz - interval '24 hours'
    ), firsts AS (
      SELECT f.batch_id, min(f.seq) AS seq FROM facts f
      WHERE f.batch_id IS NOT NULL AND f.pair_free AND NOT f.free_of_limit GROUP BY f.batch_id
    ), reserve AS (
      SELECT count(*)::int AS n FROM (
        SELECT 1 FROM firsts fs
        JOIN messages e ON e.batch_id = fs.batch_id AND e.status = 'pending' AND e.seq < fs.seq
        WHERE NOT EXISTS (SELECT 1 FROM items it WHERE it.mid = e.message_id)
          AND NOT EXISTS (SELECT 1 FROM whatsapp_limit_counts lc WHERE lc.company_id = ${companyId} AND lc.recipient = e.phone
                            AND lc.counted_at > ${t}::timestamptz - interval '24 hours')
          AND NOT EXISTS (SELECT 1 FROM contacts c WHERE c.company_id = ${companyId} AND c.phone = e.phone
                            AND c.last_inbound_at > ${t}::timestamptz - interval '24 hours')
        LIMIT (SELECT greatest(coalesce(left_, 0), 0) FROM budget)
      ) x
    ), ranked AS (
      SELECT f.*, row_number() OVER (PARTITION BY (f.pair_free AND NOT f.free_of_limit) ORDER BY f.ord) AS new_rank
      FROM facts f
    ), decided AS (
      SELECT r.message_id, r.recipient,
             CASE WHEN NOT r.pair_free THEN 'pair_rate'
                  WHEN r.free_of_limit OR r.new_rank + rs.n <= b.left_ THEN NULL
                  ELSE 'messaging_limit' END AS reason,
             (r.pair_free AND NOT r.free_of_limit AND r.new_rank + rs.n <= b.left_) AS counted,
             CASE WHEN NOT r.pair_free AND r.nth = 1 THEN least(r.pair_next, ${t}::timestamptz + make_interval(secs => ${intervalMs}::float8 / 1000))
                  WHEN NOT r.pair_free THEN ${t}::timestamptz + (r.nth - 1) * make_interval(secs => ${intervalMs}::float8 / 1000)
                  WHEN r.new_rank <= b.left_ THEN least(coalesce(b.oldest, ${t}::timestamptz) + interval '24 hours',
                                                         ${t}::timestamptz + make_interval(secs => ${RESERVE_RECHECK_MS}::float8 / 1000))
                  ELSE coalesce(b.oldest, ${t}::timestamptz) + interval '24 hours' END AS until
      FROM ranked r CROSS JOIN budget b CROSS JOIN reserve rs
    ), pairs AS (
      INSERT INTO whatsapp_pairs AS p (company_id, recipient, next_at, claimed_by)
      SELECT ${companyId}, d.recipient, ${t}::timestamptz + make_interval(secs => (${intervalMs}::float8 + ${claimMs}::float8) / 1000), d.message_id
      FROM decided d WHERE d.reason IS NULL
      ON CONFLICT (company_id, recipient) DO UPDATE SET next_at = excluded.next_at, claimed_by = excluded.claimed_by
      RETURNING 1
    ), counts AS (
      INSERT INTO whatsapp_limit_counts AS l (company_id, recipient, counted_at)
      SELECT ${companyId}, d.recipient, ${t}::timestamptz FROM decided d WHERE d.counted
      ON CONFLICT (company_id, recipient) DO UPDATE SET counted_at = excluded.counted_at
      RETURNING 1
    )
    SELECT d.message_id, d.reason,
           CASE WHEN d.reason IS NULL THEN NULL ELSE (extract(epoch FROM d.until) * 1000)::float8 END AS until_ms
    FROM decided d`.execute(db);
  return rows.map((r) => ({ message_id: r.message_id, reason: r.reason, until_ms: r.until_ms === null ? null : Math.round(Number(r.until_ms)) }));
}

/**
 * Records sends (requests started) to `recipients[i]` of company `companyIds[i]`: each pair's
 * `next_at` becomes `nextAts[i]` (clock ms: the send's time plus the pair interval), replacing the
 * claim its admission made (`claimed_by` NULL). One row per pair.
 */
export async function confirmPairs(db: Db, companyIds: number[], recipients: string[], nextAts: number[]): Promise<void> {
  await sql`
    INSERT INTO whatsapp_pairs AS p (company_id, recipient, next_at)
    SELECT v.c, v.r, v.t FROM unnest(${companyIds}::int[], ${recipients}::text[], ${nextAts.map(iso)}::timestamptz[]) AS v(c, r, t)
    ON CONFLICT (company_id, recipient) DO UPDATE SET next_at = excluded.next_at, claimed_by = NULL`.execute(db);
}

/**
 * Backs the pair (company's number, `recipient`) off until `until` (clock ms; Meta's 131056): its
 * next send waits at least until then. A later `next_at` already in place is kept.
 */
export async function backOffPairUntil(db: Db, companyId: number, recipient: string, until: number): Promise<void> {
  await sql`
    INSERT INTO whatsapp_pairs AS p (company_id, recipient, next_at) VALUES (${companyId}, ${recipient}, ${iso(until)}::timestamptz)
    ON CONFLICT (company_id, recipient) DO UPDATE SET next_at = greatest(p.next_at, excluded.next_at), claimed_by = NULL`.execute(db);
}

/**
 * The messaging limit as the operator API shows it at `now` (clock ms): `used`, the people counted in
 * the last 24 h, and `resets_at`, when the oldest of them leaves the window (ms since the epoch), or
 * null when nobody is counted.
 */
export async function limitUsage(db: Db, companyId: number, now: number): Promise<{ used: number; resets_at: number | null }> {
  const { rows } = await sql<{ used: number; oldest_ms: number | null }>`
    SELECT count(*)::int AS used, (extract(epoch FROM min(counted_at)) * 1000)::float8 AS oldest_ms
    FROM whatsapp_limit_counts WHERE company_id = ${companyId} AND counted_at > ${iso(now)}::timestamptz - interval '24 hours'`.execute(db);
  const r = rows[0];
  return { used: Number(r?.used ?? 0), resets_at: r?.oldest_ms == null ? null : Math.round(Number(r.oldest_ms)) + DAY_MS };
}

/**
 * Deletes up to `limit` pairs whose `next_at` has passed at `now` (clock ms): they no longer hold a
 * send back. Returns how many.
 */
export async function prunePairs(db: Db, now: number, limit: number): Promise<number> {
  const { rows } = await sql`
    DELETE FROM whatsapp_pairs WHERE (company_id, recipient) IN (
      SELECT company_id, recipient FROM whatsapp_pairs WHERE next_at < ${iso(now)}::timestamptz LIMIT ${limit})
    RETURNING 1`.execute(db);
  return rows.length;
}

/**
 * Deletes up to `limit` limit counts older than 24 h at `now` (clock ms), company by company through
 * the (company_id, counted_at) index (every counting company has a channel-state row). Returns how many.
 */
export async function pruneLimitCounts(db: Db, now: number, limit: number): Promise<number> {
  const { rows } = await sql`
    DELETE FROM whatsapp_limit_counts WHERE (company_id, recipient) IN (
      SELECT l.company_id, l.recipient FROM whatsapp_channel_state s
      CROSS JOIN LATERAL (
        SELECT company_id, recipient FROM whatsapp_limit_counts
        WHERE company_id = s.company_id AND counted_at <= ${iso(now)}::timestamptz - interval '24 hours' LIMIT ${limit}) l
      LIMIT ${limit})
    RETURNING 1`.execute(db);
  return rows.length;
}
