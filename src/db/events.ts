/**
 * SQL of events out to the company (docs/events.md): event endpoints, the delivery queue
 * (`event_deliveries`), the attempt log and retention. One statement per function. The events
 * themselves and their deliveries are written by the outbox triggers of migration 008; nothing here
 * writes an event.
 *
 * Times: `next_attempt_at`, attempt times and `failing_since` are the injectable clock's (passed in as
 * Dates); leases (`lease_until`) are database time, so processes with different clocks never steal
 * each other's claims before they run out.
 */
import { sql, type Transaction } from 'kysely';
import type { Db } from './database.ts';
import type { DB } from './schema.ts';

type Conn = Db | Transaction<DB>;

/** An endpoint row as the service uses it (the sealed secret included: never answer it as is). */
export interface EndpointRow {
  endpoint_id: number;
  company_id: number;
  url: string;
  events: string[];
  description: string | null;
  enabled: boolean;
  secret_sealed: string;
  disabled_reason: string | null;
  failing_since: Date | null;
  created_at: Date;
  updated_at: Date;
}

const ENDPOINT_COLUMNS = ['endpoint_id', 'company_id', 'url', 'events', 'description', 'enabled', 'secret_sealed',
  'disabled_reason', 'failing_since', 'created_at', 'updated_at'] as const;

/** Locks the company row (FOR UPDATE) so endpoint counts hold under concurrency; false when it does not exist. */
export async function lockCompany(trx: Transaction<DB>, companyId: number): Promise<boolean> {
  const row = await trx.selectFrom('companies').select('company_id').where('company_id', '=', companyId).forUpdate().executeTakeFirst();
  return row !== undefined;
}

/** Number of endpoints of a company. */
export async function countEndpoints(db: Conn, companyId: number): Promise<number> {
  const row = await db.selectFrom('event_endpoints').select((eb) => eb.fn.countAll<number>().as('n')).where('company_id', '=', companyId).executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Inserts an endpoint; returns its row. */
export async function insertEndpoint(db: Conn, v: { company_id: number; url: string; events: string[]; description: string | null; secret_sealed: string }): Promise<EndpointRow> {
  return await db.insertInto('event_endpoints').values(v).returning(ENDPOINT_COLUMNS).executeTakeFirstOrThrow() as EndpointRow;
}

/** The endpoints of a company, oldest first. */
export async function selectEndpoints(db: Conn, companyId: number): Promise<EndpointRow[]> {
  return await db.selectFrom('event_endpoints').select(ENDPOINT_COLUMNS).where('company_id', '=', companyId).orderBy('endpoint_id').execute() as EndpointRow[];
}

/** One endpoint, optionally only when it belongs to `companyId`. */
export async function selectEndpoint(db: Conn, endpointId: number, companyId?: number): Promise<EndpointRow | undefined> {
  let q = db.selectFrom('event_endpoints').select(ENDPOINT_COLUMNS).where('endpoint_id', '=', endpointId);
  if (companyId !== undefined) q = q.where('company_id', '=', companyId);
  return await q.executeTakeFirst() as EndpointRow | undefined;
}

/** Changes an endpoint; re-enabling clears `disabled_reason` and `failing_since`. Returns the row or undefined. */
export async function updateEndpointRow(db: Conn, endpointId: number, patch: { url?: string; events?: string[]; description?: string | null; enabled?: boolean; secret_sealed?: string }): Promise<EndpointRow | undefined> {
  const set: Record<string, unknown> = { ...patch, updated_at: sql`now()` };
  if (patch.enabled === true) Object.assign(set, { disabled_reason: null, failing_since: null });
  return await db.updateTable('event_endpoints').set(set).where('endpoint_id', '=', endpointId).returning(ENDPOINT_COLUMNS).executeTakeFirst() as EndpointRow | undefined;
}

/** Deletes an endpoint (its deliveries and attempts go with it); true when it existed. */
export async function deleteEndpointRow(db: Conn, endpointId: number): Promise<boolean> {
  const r = await db.deleteFrom('event_endpoints').where('endpoint_id', '=', endpointId).executeTakeFirst();
  return Number(r.numDeletedRows) > 0;
}

/** One line of the attempt log. */
export interface AttemptRow {
  attempt_id: number;
  event_id: string;
  type: string;
  attempt: number;
  status_code: number | null;
  error: string | null;
  response_excerpt: string | null;
  duration_ms: number;
  at: Date;
}

/** The newest attempts of an endpoint first (at most `limit`). */
export async function selectAttempts(db: Conn, endpointId: number, limit: number): Promise<AttemptRow[]> {
  return await db.selectFrom('event_attempts as a').innerJoin('events as e', 'e.event_id', 'a.event_id')
    .select(['a.attempt_id', 'a.event_id', 'e.type', 'a.attempt', 'a.status_code', 'a.error', 'a.response_excerpt', 'a.duration_ms', 'a.at'])
    .where('a.endpoint_id', '=', endpointId).orderBy('a.attempt_id', 'desc').limit(limit).execute() as AttemptRow[];
}

/** An event's company and type, or undefined. */
export async function selectEvent(db: Conn, eventId: string): Promise<{ event_id: string; company_id: number; type: string } | undefined> {
  return await db.selectFrom('events').select(['event_id', 'company_id', 'type']).where('event_id', '=', eventId).executeTakeFirst();
}

/**
 * Queues an event again for every enabled endpoint of its company subscribed to its type: a new
 * pending delivery, or the existing one reset to pending and due now. Returns how many were queued.
 */
export async function requeueEvent(db: Conn, eventId: string): Promise<number> {
  const r = await sql<{ n: number }>`
    WITH q AS (
      INSERT INTO event_deliveries (event_id, endpoint_id)
      SELECT ev.event_id, e.endpoint_id FROM events ev
      JOIN event_endpoints e ON e.company_id = ev.company_id AND e.enabled AND ev.type = ANY (e.events)
      WHERE ev.event_id = ${eventId}
      ON CONFLICT (event_id, endpoint_id) DO UPDATE
        SET status = 'pending', attempts = 0, next_attempt_at = NULL, lease_until = NULL, updated_at = now()
      RETURNING 1)
    SELECT count(*)::int AS n FROM q`.execute(db);
  return Number(r.rows[0]?.n ?? 0);
}

/**
 * Queues again, to one endpoint, every event of its company created at or after `since` that the
 * endpoint is subscribed to (same event ids). Returns the number of events queued.
 */
export async function replayEndpoint(db: Conn, endpointId: number, since: Date): Promise<number> {
  const r = await sql<{ n: number }>`
    WITH q AS (
      INSERT INTO event_deliveries (event_id, endpoint_id)
      SELECT ev.event_id, e.endpoint_id FROM event_endpoints e
      JOIN events ev ON ev.company_id = e.company_id AND ev.created_at >= ${since} AND ev.type = ANY (e.events)
      WHERE e.endpoint_id = ${endpointId}
      ON CONFLICT (event_id, endpoint_id) DO UPDATE
        SET status = 'pending', attempts = 0, next_attempt_at = NULL, lease_until = NULL, updated_at = now()
      RETURNING 1)
    SELECT count(*)::int AS n FROM q`.execute(db);
  return Number(r.rows[0]?.n ?? 0);
}

/** A claimed delivery: the event's stored body (exact text) and where to send it. */
export interface ClaimedDelivery {
  event_id: string;
  endpoint_id: number;
  attempts: number;
  payload: string;
  url: string;
  secret_sealed: string;
  /** The claim's lease (exact text): outcomes are written only while the row still carries it. */
  lease: string;
}

/**
 * Claims up to `limit` due deliveries of enabled endpoints (not of the endpoints in `skip`): pending,
 * `next_attempt_at` NULL or at/before `now` (injectable clock), not leased (database time); leases
 * them for `leaseMs`. FOR UPDATE SKIP LOCKED: processes claiming together get disjoint rows. Oldest
 * first: by `next_attempt_at` (NULL first), then in the order the deliveries were written (`seq`,
 * migration 018), and returned in that order.
 */
export async function claimDeliveries(db: Conn, now: Date, limit: number, leaseMs: number, skip: number[]): Promise<ClaimedDelivery[]> {
  const r = await sql<ClaimedDelivery>`
    WITH due AS (
      SELECT d.event_id, d.endpoint_id FROM event_deliveries d
      JOIN event_endpoints e ON e.endpoint_id = d.endpoint_id AND e.enabled
      WHERE d.status = 'pending' AND (d.next_attempt_at IS NULL OR d.next_attempt_at <= ${now})
        AND (d.lease_until IS NULL OR d.lease_until < now())
        AND NOT (d.endpoint_id = ANY (${skip}::int[]))
      ORDER BY d.next_attempt_at NULLS FIRST, d.seq
      LIMIT ${limit}
      FOR UPDATE OF d SKIP LOCKED),
    leased AS (
      UPDATE event_deliveries d SET lease_until = now() + make_interval(secs => ${leaseMs / 1000})
      FROM due WHERE d.event_id = due.event_id AND d.endpoint_id = due.endpoint_id
      RETURNING d.event_id, d.endpoint_id, d.attempts, d.lease_until, d.next_attempt_at, d.seq)
    SELECT l.event_id, l.endpoint_id, l.attempts, ev.payload::text AS payload, e.url, e.secret_sealed, l.lease_until::text AS lease
    FROM leased l JOIN events ev ON ev.event_id = l.event_id JOIN event_endpoints e ON e.endpoint_id = l.endpoint_id
    ORDER BY l.next_attempt_at NULLS FIRST, l.seq`.execute(db);
  return r.rows;
}

/**
 * Extends the leases of deliveries still held (still carrying the given lease) by `leaseMs` from now
 * (database time); returns their new leases. One statement for all of them.
 */
export async function renewLeases(db: Conn, held: { event_id: string; endpoint_id: number; lease: string }[], leaseMs: number): Promise<{ event_id: string; endpoint_id: number; lease: string }[]> {
  if (held.length === 0) return [];
  const r = await sql<{ event_id: string; endpoint_id: number; lease: string }>`
    UPDATE event_deliveries d SET lease_until = now() + make_interval(secs => ${leaseMs / 1000})
    FROM unnest(${held.map((h) => h.event_id)}::text[], ${held.map((h) => h.endpoint_id)}::int[], ${held.map((h) => h.lease)}::timestamptz[])
      AS x(event_id, endpoint_id, lease)
    WHERE d.event_id = x.event_id AND d.endpoint_id = x.endpoint_id AND d.lease_until = x.lease AND d.status = 'pending'
    RETURNING d.event_id, d.endpoint_id, d.lease_until::text AS lease`.execute(db);
  return r.rows;
}

/** The outcome of one attempt, as `recordAttempts` writes it. */
export interface AttemptResult {
  event_id: string;
  endpoint_id: number;
  /** The lease of the claim the attempt was made under (ClaimedDelivery.lease). */
  lease: string;
  attempt: number;
  status_code: number | null;
  error: string | null;
  response_excerpt: string | null;
  duration_ms: number;
  at: Date;
  /** The delivery's status after this attempt. */
  next_status: 'pending' | 'delivered' | 'failed';
  /** When pending: when it is due again (injectable clock). */
  next_attempt_at: Date | null;
}

/**
 * Writes a set of attempt outcomes in one statement: appends them to the attempt log and moves each
 * delivery to its next status, releasing the lease, unless the delivery was queued again (resend,
 * replay) or claimed by another run since: then only the attempt is logged. Deliveries or endpoints
 * deleted meanwhile are skipped.
 */
export async function recordAttempts(db: Conn, results: AttemptResult[]): Promise<void> {
  if (results.length === 0) return;
  const col = <K extends keyof AttemptResult>(k: K) => results.map((r) => r[k]);
  const iso = (d: Date | null) => (d ? d.toISOString() : null);
  await sql`
    WITH r AS (
      SELECT * FROM unnest(${col('event_id')}::text[], ${col('endpoint_id')}::int[], ${col('attempt')}::int[],
        ${col('status_code')}::int[], ${col('error')}::text[], ${col('response_excerpt')}::text[], ${col('duration_ms')}::int[],
        ${results.map((x) => iso(x.at))}::timestamptz[], ${col('next_status')}::text[], ${results.map((x) => iso(x.next_attempt_at))}::timestamptz[],
        ${col('lease')}::timestamptz[])
        AS r(event_id, endpoint_id, attempt, status_code, error, response_excerpt, duration_ms, at, next_status, next_attempt_at, lease)),
    live AS (
      SELECT r.* FROM r JOIN event_deliveries d ON d.event_id = r.event_id AND d.endpoint_id = r.endpoint_id),
    logged AS (
      INSERT INTO event_attempts (event_id, endpoint_id, attempt, status_code, error, response_excerpt, duration_ms, at)
      SELECT event_id, endpoint_id, attempt, status_code, error, response_excerpt, duration_ms, at FROM live)
    UPDATE event_deliveries d SET status = live.next_status, attempts = live.attempt, next_attempt_at = live.next_attempt_at,
      lease_until = NULL, updated_at = now()
    FROM live WHERE d.event_id = live.event_id AND d.endpoint_id = live.endpoint_id AND d.status = 'pending'
      AND d.lease_until = live.lease`.execute(db);
}

/**
 * Updates the endpoints' failure streaks in one statement: `failing_since` NULL for the endpoints in
 * `ok` (their last attempt succeeded), and set (when not set yet) to the given time for the others.
 */
export async function updateFailingSince(db: Conn, ok: number[], failing: { endpoint_id: number; since: Date }[]): Promise<void> {
  if (ok.length === 0 && failing.length === 0) return;
  await sql`
    UPDATE event_endpoints e SET failing_since = CASE WHEN x.since IS NULL THEN NULL ELSE coalesce(e.failing_since, x.since) END
    FROM (SELECT * FROM unnest(${[...ok, ...failing.map((f) => f.endpoint_id)]}::int[],
      ${[...ok.map(() => null), ...failing.map((f) => f.since.toISOString())]}::timestamptz[]) AS x(endpoint_id, since)) x
    WHERE e.endpoint_id = x.endpoint_id
      AND e.failing_since IS DISTINCT FROM (CASE WHEN x.since IS NULL THEN NULL ELSE coalesce(e.failing_since, x.since) END)`.execute(db);
}

/**
 * Disables endpoints with a reason and fails their pending deliveries (one statement): those in
 * `ids`, plus every enabled one failing since at/before `failingBefore` (when given). Returns the
 * disabled endpoints' ids.
 */
export async function disableEndpoints(db: Conn, ids: number[], reason: string, failingBefore?: Date): Promise<number[]> {
  const r = await sql<{ endpoint_id: number }>`
    WITH off AS (
      UPDATE event_endpoints SET enabled = false, disabled_reason = ${reason}, updated_at = now()
      WHERE enabled AND (endpoint_id = ANY (${ids}::int[]) OR failing_since <= ${failingBefore ?? null}::timestamptz)
      RETURNING endpoint_id),
    failed AS (
      UPDATE event_deliveries d SET status = 'failed', lease_until = NULL, updated_at = now()
      FROM off WHERE d.endpoint_id = off.endpoint_id AND d.status = 'pending')
    SELECT endpoint_id FROM off`.execute(db);
  return r.rows.map((x) => x.endpoint_id);
}

/** Deletes up to `limit` events created before `before` (deliveries and attempts cascade); returns how many. */
export async function deleteOldEvents(db: Conn, before: Date, limit: number): Promise<number> {
  const r = await sql`DELETE FROM events WHERE event_id IN (SELECT event_id FROM events WHERE created_at < ${before} LIMIT ${limit})`.execute(db);
  return Number(r.numAffectedRows ?? 0);
}

/** Deletes up to `limit` attempts made before `before` (injectable clock); returns how many. */
export async function deleteOldAttempts(db: Conn, before: Date, limit: number): Promise<number> {
  const r = await sql`DELETE FROM event_attempts WHERE attempt_id IN (SELECT attempt_id FROM event_attempts WHERE at < ${before} LIMIT ${limit})`.execute(db);
  return Number(r.numAffectedRows ?? 0);
}
