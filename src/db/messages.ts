/**
 * The set-based SQL of the send pipeline: each function is one statement over many messages (a chunk),
 * never one query per message. Leases use database time (`now()`); times that operators see
 * (scheduled_for, sent_at, completed_at) come from the injectable clock and are passed in.
 *
 * Exactly-once hand-off rule: a message is handed to a provider only by the run that holds its lease,
 * and a result is committed only `WHERE status = 'pending'`, so once a final status has committed no
 * claim can select the message again.
 */
import { sql } from 'kysely';
import type { Db } from './database.ts';
import { executePreparedSql } from './prepared.ts';
import type { MessageStatus } from './schema.ts';
import type { Rendered } from '../domain/render.ts';
import type { ProviderError } from '../providers/types.ts';

/** A message row as fan-out writes it. Times in ms since the epoch. */
export interface NewMessage {
  message_id: string;
  seq: number;
  contact_id: number | null;
  phone: string;
  status: MessageStatus;
  reason: string | null;
  error: string | null;
  scheduled_for: number | null;
  held_until: number | null;
  rendered: Rendered | null;
  /** Not handed to the provider by then (ms), the message ends skipped / `expired`; null: never. */
  expires_at?: number | null;
}

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/** Inserts a batch's messages in one statement (rows passed as one JSON document). */
export async function insertMessages(db: Db, batchId: string, companyId: number, rows: NewMessage[]): Promise<void> {
  if (rows.length === 0) return;
  const doc = JSON.stringify(rows.map((r) => ({ ...r, scheduled_for: iso(r.scheduled_for), held_until: iso(r.held_until), expires_at: iso(r.expires_at ?? null) })));
  await sql`
    INSERT INTO messages (message_id, batch_id, company_id, seq, contact_id, phone, status, reason, error, scheduled_for, held_until, rendered, expires_at)
    SELECT t.message_id, ${batchId}::uuid, ${companyId}::int, t.seq, t.contact_id, t.phone, t.status, t.reason, t.error, t.scheduled_for, t.held_until, t.rendered, t.expires_at
    FROM jsonb_to_recordset(${doc}::jsonb) AS t(
      message_id uuid, seq int, contact_id int8, phone text, status text, reason text, error text,
      scheduled_for timestamptz, held_until timestamptz, rendered jsonb, expires_at timestamptz)`.execute(db);
}

/**
 * A claimed message: what a delivery run hands to the provider. `attempts`: the attempts that count
 * against the retry schedule so far (every attempt minus those that ended in a provider's wait).
 */
export interface Claimed { message_id: string; seq: number; rendered: Rendered; attempts: number }

/**
 * A batch's delivery state as a claim sees it (db/batch-control.ts): `running`, `paused`, `cancelled`,
 * or `gone` (the batch was deleted with its company).
 */
export type DeliveryState = 'running' | 'paused' | 'cancelled' | 'gone';

/** What a claim did: the messages claimed (by seq), how many it found expired and skipped, and the batch's state. */
export interface Claim { claimed: Claimed[]; expired: number; state: DeliveryState }

/**
 * The batch's state, read under a key-share lock of its row (a CTE `b` of a claim): a pause or cancel
 * takes the row FOR UPDATE first (db/batch-control.ts), so it waits for the claims in progress, and a
 * claim that starts after it sees it. The weakest lock that does so: other updates of the batch row
 * (a fan-out step's progress, the completion) neither wait for claims nor hold them up.
 */
const batchGate = (batchId: string) => sql`SELECT paused_at IS NOT NULL AS paused, cancelled_at IS NOT NULL AS cancelled
  FROM batches WHERE batch_id = ${batchId}::uuid FOR KEY SHARE`;

const stateOf = (row: { paused: boolean | null; cancelled: boolean | null } | undefined): DeliveryState =>
  !row || row.paused === null ? 'gone' : row.cancelled ? 'cancelled' : row.paused ? 'paused' : 'running';

/**
 * Claims at most `limit` deliverable messages of a batch in `seq` range [from, to], lowest seq first:
 * pending, released (not held), and not leased by a live run; none while the batch is paused or
 * cancelled (read under a key-share lock of the batch row, so nothing is claimed once a pause or cancel
 * has committed: docs/decisions.md "Cancel, pause and resume"). The lease lasts `leaseSeconds` of
 * database time. In the same statement the ones whose `expires_at` is at or before `now` (ms, the
 * injectable clock) end `skipped` with reason `expired` instead (docs/whatsapp.md "Messages that
 * expire"); a claimed message loses the wait reason it was released from. Rows another claim holds
 * are skipped (SKIP LOCKED).
 */
export async function claimMessages(db: Db, batchId: string, from: number, to: number, leaseSeconds: number, now: number, limit = 2_147_483_647): Promise<Claim> {
  const { rows } = await executePreparedSql(db, sql<{ paused: boolean | null; cancelled: boolean | null } & Partial<Claimed> & { status: MessageStatus | null }>`
    WITH b AS (${batchGate(batchId)}),
    pick AS (
      SELECT message_id FROM messages
      WHERE batch_id = ${batchId}::uuid AND seq BETWEEN ${from} AND ${to} AND status = 'pending' AND held_until IS NULL
        AND (lease_until IS NULL OR lease_until < now())
        AND EXISTS (SELECT 1 FROM b WHERE NOT b.paused AND NOT b.cancelled)
      ORDER BY seq LIMIT ${limit}
      FOR UPDATE SKIP LOCKED),
    c AS (
      UPDATE messages m SET
        status = CASE WHEN m.expires_at <= ${iso(now)}::timestamptz THEN 'skipped' ELSE m.status END,
        reason = CASE WHEN m.expires_at <= ${iso(now)}::timestamptz THEN 'expired' END,
        next_attempt_at = CASE WHEN m.expires_at <= ${iso(now)}::timestamptz THEN NULL ELSE m.next_attempt_at END,
        lease_until = CASE WHEN m.expires_at <= ${iso(now)}::timestamptz THEN NULL ELSE now() + make_interval(secs => ${leaseSeconds}) END
      FROM pick
      WHERE m.message_id = pick.message_id AND m.status = 'pending' AND m.held_until IS NULL
        AND (m.lease_until IS NULL OR m.lease_until < now())
      RETURNING m.message_id, m.seq, m.rendered, m.attempts - m.uncounted_attempts AS attempts, m.status)
    SELECT b.paused, b.cancelled, c.* FROM b LEFT JOIN c ON true`);
  const claimed: Claimed[] = [];
  let expired = 0;
  for (const r of rows) {
    if (!r.message_id) continue;
    if (r.status === 'skipped') expired++;
    else claimed.push({ message_id: r.message_id, seq: r.seq!, rendered: r.rendered!, attempts: r.attempts! });
  }
  return { claimed: claimed.sort((a, b) => a.seq - b.seq), expired, state: stateOf(rows[0]) };
}

/**
 * Extends the leases of messages this run still holds (those not yet committed; a message whose retry
 * was committed meanwhile is held and keeps no lease).
 */
export async function renewLeases(db: Db, messageIds: string[], leaseSeconds: number): Promise<void> {
  if (messageIds.length === 0) return;
  await executePreparedSql(db, sql`
    UPDATE messages SET lease_until = now() + make_interval(secs => ${leaseSeconds})
    WHERE message_id = ANY(${messageIds}::uuid[]) AND status = 'pending' AND held_until IS NULL`);
}

/**
 * The outcome of one message's delivery run (docs/decisions.md#7-a-messages-life, #8-retries). Times in ms of the
 * injectable clock.
 * - `sent`: `sent_at`, and the provider's id when it gave one;
 * - `failed`: `failed_at`, `error` and the provider's `error_code` (or null);
 * - `skipped`: `reason` (the provider decided not to send it);
 * - `pending` with `retry_at`: waits for its next attempt (`next_attempt_at` and the hold `held_until`
 *   both become `retry_at`, or the message's `expires_at` when that comes first, so that it is released
 *   at its expiry and then skipped), with `reason` saying what it waits for (null: a retry), keeping
 *   the attempt's error and code;
 * - `pending` without `retry_at`: interrupted before an outcome; the lease is released so that a later
 *   run sends it at once (its earlier error stays unless this run has a newer one).
 * `attempts` is added to the stored count (and to `uncounted_attempts` when `uncounted`: a wait that
 * does not count against the retry schedule). `provider_error` is the provider's error as given
 * (kept while pending without a newer error, cleared when sent). Every result clears the lease.
 */
export interface MessageResult {
  message_id: string;
  status: 'sent' | 'failed' | 'pending' | 'skipped';
  error: string | null;
  error_code?: string | null;
  attempts: number;
  uncounted?: boolean;
  sent_at: number | null;
  failed_at?: number | null;
  provider_message_id?: string | null;
  retry_at?: number | null;
  reason?: string | null;
  provider_error?: ProviderError | null;
}

/** The JSON document of results that the result statements read with jsonb_to_recordset. */
function resultsDocument(results: MessageResult[]): string {
  return JSON.stringify(results.map((r) => ({
    message_id: r.message_id, status: r.status, error: r.error, error_code: r.error_code ?? null, attempts: r.attempts,
    uncounted: r.uncounted ? r.attempts : 0, sent_at: iso(r.sent_at), failed_at: iso(r.failed_at ?? null),
    provider_message_id: r.provider_message_id ?? null, retry_at: iso(r.retry_at ?? null), reason: r.reason ?? null,
    provider_error: r.provider_error ?? null,
  })));
}

/** The UPDATE that writes results (`doc`: resultsDocument), returning each written row's status and id. */
const resultUpdate = (doc: string) => sql`
    UPDATE messages AS m SET status = t.status, reason = t.reason,
      error = CASE WHEN t.status = 'pending' THEN coalesce(t.error, m.error) ELSE t.error END,
      error_code = CASE WHEN t.status = 'pending' AND t.error IS NULL THEN m.error_code ELSE t.error_code END,
      provider_error = CASE WHEN t.status = 'pending' AND t.error IS NULL THEN m.provider_error ELSE t.provider_error END,
      attempts = m.attempts + t.attempts, uncounted_attempts = m.uncounted_attempts + t.uncounted,
      sent_at = t.sent_at, failed_at = t.failed_at,
      provider_message_id = coalesce(t.provider_message_id, m.provider_message_id),
      next_attempt_at = CASE WHEN t.retry_at IS NULL THEN NULL ELSE least(t.retry_at, m.expires_at) END,
      held_until = CASE WHEN t.retry_at IS NULL THEN NULL ELSE least(t.retry_at, m.expires_at) END,
      lease_until = NULL, updated_at = now()
    FROM jsonb_to_recordset(${doc}::jsonb) AS t(message_id uuid, status text, error text, error_code text, attempts int,
      uncounted int, sent_at timestamptz, failed_at timestamptz, provider_message_id text, retry_at timestamptz, reason text,
      provider_error jsonb)
    WHERE m.message_id = t.message_id AND m.status = 'pending'
    RETURNING m.status, m.message_id`;

/** What commitResults wrote and read. */
export interface ResultsAndStates {
  /** message_id -> the status written; a result for a message no longer pending has none. */
  written: Map<string, MessageStatus>;
  /** batch_id (as given) -> its delivery state as of the statement's start, for every batch asked about. */
  states: Map<string, DeliveryState>;
}

/**
 * Commits results in one statement (one UPDATE, so the outbox trigger of migration 008 builds each
 * message event from the complete row), skipping rows no longer pending, and reads in the same
 * statement the delivery state (running, paused, cancelled, or gone) of batches `batchIds` as of its
 * start: what delivery runs read at each result flush to start nothing new after a pause or cancel
 * (docs/decisions.md "Cancel, pause and resume"), without a statement of their own. The results may
 * belong to many runs and batches (one statement for the flushes of a worker process's runs,
 * queue/handlers/result-writer.ts).
 */
export async function commitResults(db: Db, results: MessageResult[], batchIds: readonly string[] = []): Promise<ResultsAndStates> {
  const { rows } = await executePreparedSql(db, sql<{ id: string; status: MessageStatus | null; paused: boolean | null; cancelled: boolean | null }>`
    WITH u AS (${resultUpdate(resultsDocument(results))}),
    s AS (SELECT batch_id, paused_at IS NOT NULL AS paused, cancelled_at IS NOT NULL AS cancelled FROM batches
      WHERE batch_id = ANY(${[...batchIds]}::uuid[]))
    SELECT u.message_id::text AS id, u.status, NULL::boolean AS paused, NULL::boolean AS cancelled FROM u
    UNION ALL SELECT s.batch_id::text, NULL, s.paused, s.cancelled FROM s`);
  const written = new Map<string, MessageStatus>();
  const states = new Map<string, DeliveryState>(batchIds.map((id) => [id, 'gone']));
  const asGiven = new Map(batchIds.map((id) => [id.toLowerCase(), id])); // PostgreSQL spells a uuid in lowercase
  for (const r of rows) {
    if (r.status !== null) written.set(r.id, r.status);
    else states.set(asGiven.get(r.id) ?? r.id, stateOf(r));
  }
  return { written, states };
}

/**
 * Opts out the contacts of messages `messageIds` (a provider said the person stopped such messages):
 * `opt_out_source` = `source`, at `at` (ms), evidence `evidence` with the message's id; only contacts
 * not opted out already. The contacts trigger (migrations 008, 029) writes each `contact.opted_out`
 * event and consent ledger entry. Returns how many changed.
 */
export async function optOutContactsOf(db: Db, messageIds: string[], source: string, at: number, evidence: Record<string, unknown> = {}): Promise<number> {
  if (messageIds.length === 0) return 0;
  const result = await sql`
    UPDATE contacts c SET opted_out = true, opt_out_source = ${source}, opt_out_at = ${iso(at)}::timestamptz,
      opt_out_evidence = ${JSON.stringify(evidence)}::jsonb || jsonb_strip_nulls(jsonb_build_object('message_id', m.message_id::text, 'provider_message_id', m.provider_message_id)),
      updated_at = now()
    FROM messages m
    WHERE m.message_id = ANY(${messageIds}::uuid[]) AND c.contact_id = m.contact_id AND c.company_id = m.company_id AND NOT c.opted_out`.execute(db);
  return Number(result.numAffectedRows ?? 0);
}

/**
 * The outbox provider's whole delivery of a range in one statement: recording a message as sent is
 * its hand-off, so claim and result are the same committed write (nothing while the batch is paused
 * or cancelled, read as a claim reads it). A message whose `expires_at` is at or before `now` (ms, the
 * injectable clock, also the `sent_at`) ends skipped / `expired` instead. Returns how many were sent
 * and how many expired, and the batch's state.
 */
export async function sendRangeToOutbox(db: Db, batchId: string, from: number, to: number, now: number): Promise<{ sent: number; expired: number; state: DeliveryState }> {
  const { rows } = await sql<{ sent: number; expired: number; paused: boolean | null; cancelled: boolean | null }>`
    WITH b AS (${batchGate(batchId)}),
    done AS (
      UPDATE messages SET
        status = CASE WHEN expires_at <= ${iso(now)}::timestamptz THEN 'skipped' ELSE 'sent' END,
        reason = CASE WHEN expires_at <= ${iso(now)}::timestamptz THEN 'expired' END,
        attempts = attempts + CASE WHEN expires_at <= ${iso(now)}::timestamptz THEN 0 ELSE 1 END,
        sent_at = CASE WHEN expires_at <= ${iso(now)}::timestamptz THEN NULL ELSE ${iso(now)}::timestamptz END,
        lease_until = NULL, next_attempt_at = NULL, updated_at = now()
      WHERE batch_id = ${batchId}::uuid AND seq BETWEEN ${from} AND ${to} AND status = 'pending' AND held_until IS NULL
        AND (lease_until IS NULL OR lease_until < now())
        AND EXISTS (SELECT 1 FROM b WHERE NOT b.paused AND NOT b.cancelled)
      RETURNING status)
    SELECT (SELECT count(*) FROM done WHERE status = 'sent')::int AS sent, (SELECT count(*) FROM done WHERE status = 'skipped')::int AS expired,
      b.paused, b.cancelled
    FROM (SELECT 1) one LEFT JOIN b ON true`.execute(db);
  return { sent: rows[0]?.sent ?? 0, expired: rows[0]?.expired ?? 0, state: stateOf(rows[0]) };
}

/** Pending, released messages left in a range (leased by another run, or interrupted). */
export async function countUnfinished(db: Db, batchId: string, from: number, to: number): Promise<number> {
  const { rows } = await executePreparedSql(db, sql<{ n: number }>`
    SELECT count(*)::int AS n FROM messages
    WHERE batch_id = ${batchId}::uuid AND seq BETWEEN ${from} AND ${to} AND status = 'pending' AND held_until IS NULL`);
  return rows[0]?.n ?? 0;
}

/**
 * Marks the batch `completed` (at `now`, ms) when every item has its message (the fan-out is done,
 * `fanned_out = total`) and no message is pending any more; true when this call did it. Safe under
 * concurrency: of two chunks finishing together, the later statement sees both.
 */
export async function completeBatchIfDone(db: Db, batchId: string, now: number): Promise<boolean> {
  const result = await executePreparedSql(db, sql`
    UPDATE batches SET status = 'completed', completed_at = ${iso(now)}::timestamptz
    WHERE batch_id = ${batchId}::uuid AND status <> 'completed' AND fanned_out >= total
      AND NOT EXISTS (SELECT 1 FROM messages WHERE batch_id = ${batchId}::uuid AND status = 'pending')`);
  return Number(result.numAffectedRows ?? 0) > 0;
}

/** A released message: which chunk it belongs to. */
export interface Released { batch_id: string; company_id: number; seq: number }

/**
 * Releases held messages whose `held_until` is at or before `now` (ms, the injectable clock), of one
 * batch or of all, at most `limit`; rows locked by a concurrent release are skipped, so each message is
 * released once. Run it in the transaction that enqueues the released messages' delivery.
 */
export async function releaseHeld(db: Db, now: number, batchId: string | null, limit: number): Promise<Released[]> {
  const { rows } = await sql<Released>`
    WITH due AS (
      SELECT message_id FROM messages
      WHERE held_until IS NOT NULL AND held_until <= ${iso(now)}::timestamptz
        AND (${batchId}::uuid IS NULL OR batch_id = ${batchId}::uuid)
      ORDER BY held_until LIMIT ${limit}
      FOR UPDATE SKIP LOCKED)
    UPDATE messages m SET held_until = NULL, updated_at = now() FROM due
    WHERE m.message_id = due.message_id
    RETURNING m.batch_id, m.company_id, m.seq`.execute(db);
  return rows;
}

/**
 * Recovery of dead delivery runs: pending, released messages whose lease ran out
 * (`lease_until < now()`, database time; a live run renews its leases well before) lose the lease, at
 * most `limit` of them; rows locked by a concurrent recovery are skipped, so each is recovered once.
 * Only batches still `processing` are looked at (partial index `batches_processing`, migration 011:
 * `lease_until` itself is not indexed, so claims and results stay HOT updates).
 * Run it in the transaction that enqueues their `messages-deliver` chunks.
 */
export async function recoverExpiredLeases(db: Db, limit: number): Promise<Released[]> {
  const { rows } = await sql<Released>`
    WITH dead AS (
      SELECT m.message_id FROM batches b JOIN messages m ON m.batch_id = b.batch_id
      WHERE b.status = 'processing' AND m.status = 'pending' AND m.held_until IS NULL
        AND m.lease_until IS NOT NULL AND m.lease_until < now()
      LIMIT ${limit}
      FOR UPDATE OF m SKIP LOCKED)
    UPDATE messages m SET lease_until = NULL, updated_at = now() FROM dead
    WHERE m.message_id = dead.message_id
    RETURNING m.batch_id, m.company_id, m.seq`.execute(db);
  return rows;
}

/**
 * The channel provider (`companies.channel->>'provider'`, null when none is set) of each company in
 * `companyIds`, in one statement: release and recovery chunk by it as fan-out does (`chunkSizeFor`).
 */
export async function companyProviders(db: Db, companyIds: number[]): Promise<Map<number, string | null>> {
  if (companyIds.length === 0) return new Map();
  const { rows } = await sql<{ company_id: number; provider: string | null }>`
    SELECT company_id, channel->>'provider' AS provider FROM companies
    WHERE company_id = ANY(${companyIds}::int[])`.execute(db);
  return new Map(rows.map((r) => [Number(r.company_id), r.provider]));
}

/** The earliest `held_until` (ms) of a batch's messages still held, or null. */
export async function nextHeld(db: Db, batchId: string): Promise<number | null> {
  const { rows } = await sql<{ t: Date | null }>`
    SELECT min(held_until) AS t FROM messages WHERE batch_id = ${batchId}::uuid AND held_until IS NOT NULL`.execute(db);
  return rows[0]?.t ? new Date(rows[0].t).getTime() : null;
}

/** Splits sorted `seqs` into contiguous-by-order ranges of at most `size` messages each. */
export function chunkRanges(seqs: number[], size: number): { seq_from: number; seq_to: number }[] {
  const sorted = [...seqs].sort((a, b) => a - b);
  const out: { seq_from: number; seq_to: number }[] = [];
  for (let i = 0; i < sorted.length; i += size) {
    out.push({ seq_from: sorted[i], seq_to: sorted[Math.min(i + size, sorted.length) - 1] });
  }
  return out;
}
