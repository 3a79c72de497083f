/**
 * Sign-in throttling: failed sign-ins are rate-limited. Failed attempts are counted per
 * bucket in the `console_login_failures` table, so every process on one database shares the counts:
 *
 * - per email: `PER_EMAIL` failures in `WINDOW_MS` (stops guessing one account's password);
 * - per client address: `PER_ADDRESS` failures in `WINDOW_MS` (stops trying many accounts).
 *
 * A window starts at a bucket's first failure and lasts `WINDOW_MS`. While a bucket is full, sign-in is
 * refused before the password is checked. A successful sign-in clears the email's bucket. Only
 * failures count, so people who sign in correctly are never throttled.
 *
 * Not a library: rate-limiter-flexible would need its own PostgreSQL pool and a separate in-memory
 * store for PGlite; this is one upsert on the database the service already has, for both.
 */
import { deleteBucket, selectOpenBuckets, upsertFailure } from '../../db/console-login-failures.ts';
import type { Db } from '../../db/database.ts';

/** Length of a throttling window: 15 minutes. */
export const WINDOW_MS = 15 * 60_000;
/** Failed attempts allowed per email in one window. */
export const PER_EMAIL = 10;
/** Failed attempts allowed per client address in one window. */
export const PER_ADDRESS = 50;

const buckets = (email: string, address: string) => [
  { bucket: `email:${email.trim().toLowerCase()}`, limit: PER_EMAIL },
  { bucket: `addr:${address}`, limit: PER_ADDRESS },
];

/**
 * Milliseconds until sign-in is allowed again for this email from this address; 0 when it is allowed
 * now. `now` is the caller's clock.
 */
export async function loginBlockedFor(db: Db, email: string, address: string, now: Date): Promise<number> {
  const all = buckets(email, address);
  const rows = await selectOpenBuckets(db, all.map((b) => b.bucket), new Date(now.getTime() - WINDOW_MS));
  let wait = 0;
  for (const row of rows) {
    const limit = all.find((b) => b.bucket === row.bucket)?.limit ?? 0;
    if (row.failures >= limit) wait = Math.max(wait, row.window_start.getTime() + WINDOW_MS - now.getTime());
  }
  return wait;
}

/** Counts a failed attempt against the email's and the address's buckets. */
export async function recordLoginFailure(db: Db, email: string, address: string, now: Date): Promise<void> {
  const windowStart = new Date(now.getTime() - WINDOW_MS);
  for (const { bucket } of buckets(email, address)) await upsertFailure(db, bucket, now, windowStart);
}

/** Forgets the email's failures after a successful sign-in. */
export async function clearLoginFailures(db: Db, email: string): Promise<void> {
  await deleteBucket(db, `email:${email.trim().toLowerCase()}`);
}
