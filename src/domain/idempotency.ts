/**
 * Idempotency keys for 4.3 and 4.4 (beyond the original API and compatible with it).
 *
 * A request with an `Idempotency-Key` header claims the key for its company. The same key with the
 * same request within 24 hours gets the first answer again and creates nothing; with a different
 * request, 422; while the first is still in flight, 409. A claim is a lease: if the process dies
 * before answering, the key is free again when the lease ends. The first answer of an accepted send is
 * stored in the same transaction as the batch, so a replay can never miss a batch or see a second one.
 */
import { createHash } from 'node:crypto';
import type { Db } from '../db/database.ts';
import { claimKeyRow, deleteKeysBefore, deleteUnansweredKey, selectKeyRow, storeAnswer } from '../db/idempotency-keys.ts';

/** How long an answer is replayed. */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
/** How long an in-flight claim holds the key. */
export const IDEMPOTENCY_LEASE_MS = 30_000;

const KEY_RE = /^[\x21-\x7e]{1,255}$/;

/** True when the header value is usable as a key: 1 to 255 visible ASCII characters. */
export function isValidIdempotencyKey(key: string): boolean {
  return KEY_RE.test(key);
}

/** SHA-256 of the operation name and the raw body: what "the same request" means. */
export function requestHash(operation: string, body: Buffer): Buffer {
  return createHash('sha256').update(operation).update('\0').update(body).digest();
}

export type Claim =
  | { kind: 'claimed' }
  | { kind: 'replay'; status: number; body: string }
  | { kind: 'mismatch' }
  | { kind: 'in_flight' };

/**
 * Claims `key` for the company at `now` (ms), or says why not. One statement: a fresh key is inserted;
 * an expired answer or an abandoned lease with the same request is taken over.
 */
export async function claimKey(db: Db, companyId: number, key: string, hash: Buffer, now: number): Promise<Claim> {
  const nowTs = new Date(now);
  const lease = new Date(now + IDEMPOTENCY_LEASE_MS);
  const expired = new Date(now - IDEMPOTENCY_TTL_MS);
  if (await claimKeyRow(db, companyId, key, hash, nowTs, lease, expired)) return { kind: 'claimed' };
  const row = await selectKeyRow(db, companyId, key);
  if (!row) return claimKey(db, companyId, key, hash, now); // deleted meanwhile: try again
  if (!Buffer.from(row.request_hash).equals(hash)) return { kind: 'mismatch' };
  if (row.response_status === null) return { kind: 'in_flight' };
  return { kind: 'replay', status: row.response_status, body: row.response_body ?? '' };
}

/** Stores the first answer (in the caller's transaction when given one) and ends the lease. */
export async function completeKey(db: Db, companyId: number, key: string, status: number, body: string): Promise<void> {
  await storeAnswer(db, companyId, key, status, body);
}

/** Frees a claim whose request ended without an answer worth replaying (an unexpected error). */
export async function releaseKey(db: Db, companyId: number, key: string): Promise<void> {
  await deleteUnansweredKey(db, companyId, key);
}

/**
 * Deletes up to `limit` keys older than the replay window at `now` (ms, the injectable clock): a claim
 * would take them over anyway. Returns how many (the retention sweep calls it until fewer than
 * `limit`; docs/operations.md "Retention").
 */
export async function purgeExpiredKeys(db: Db, now: number, limit: number): Promise<number> {
  return deleteKeysBefore(db, new Date(now - IDEMPOTENCY_TTL_MS), limit);
}
