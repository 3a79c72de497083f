/**
 * One batch per confirm of a console campaign send (src/console/routes/campaign-send.ts).
 *
 * The review page's confirm form carries a token sealed with the service's secrets key (the same
 * authenticated encryption as provider secrets, src/domain/secrets.ts): a random nonce, the company,
 * the user, the campaign, a digest of the reviewed parameters (audience, numbers or segment, send
 * time) and when it was issued. Nothing is stored for a review. The confirm opens the token (a token
 * that does not open was tampered with), checks that it is bound to the same company, user, campaign
 * and parameters and is younger than CONFIRM_TOKEN_TTL_MS, and then claims the nonce as an idempotency
 * key of the company (`console-send:<nonce>`, src/domain/idempotency.ts) whose answer — the batch id —
 * is committed with the batch: a second submit of the same form (a double click, a reload) finds that
 * answer and shows the first batch instead of creating another.
 */
import { createHash, randomBytes } from 'node:crypto';
import { IDEMPOTENCY_TTL_MS } from './idempotency.ts';

/** How long a review's confirm form may be submitted (the idempotency keys' replay window). */
export const CONFIRM_TOKEN_TTL_MS = IDEMPOTENCY_TTL_MS;

/** What a token is bound to; `params` are the reviewed form fields (any order). */
export interface ConfirmBinding { company_id: number; user_id: number; campaign_id: number; params: Record<string, string> }

interface Payload { v: 1; n: string; c: number; u: number; k: number; p: string; t: number }

/** SHA-256 (base64url) of the reviewed parameters, by field name. */
export function paramsDigest(params: Record<string, string>): string {
  const h = createHash('sha256');
  for (const k of Object.keys(params).sort()) h.update(k).update('\0').update(params[k]).update('\0');
  return h.digest('base64url');
}

/** A fresh token for `binding` issued at `now` (ms), sealed with `seal` (AppDeps.sealSecret). */
export function issueConfirmToken(seal: (plaintext: string) => string, binding: ConfirmBinding, now: number): string {
  const payload: Payload = { v: 1, n: randomBytes(16).toString('base64url'), c: binding.company_id, u: binding.user_id, k: binding.campaign_id, p: paramsDigest(binding.params), t: now };
  return seal(JSON.stringify(payload));
}

/** What a submitted token is: its idempotency key when good, else why not. */
export type ConfirmCheck =
  | { ok: true; key: string; digest: string }
  | { ok: false; why: 'invalid' | 'other_parameters' | 'expired' };

/**
 * Checks `token` against `binding` at `now` (ms) with `open` (AppDeps.openSecret, throws on a token it
 * did not seal): `invalid` (missing, tampered, or not this company's / user's / campaign's),
 * `other_parameters` (the form's parameters differ from those reviewed), `expired`.
 */
export function checkConfirmToken(open: (sealed: string) => string, token: string, binding: ConfirmBinding, now: number): ConfirmCheck {
  let p: Payload;
  try {
    if (!token || token.length > 2000) return { ok: false, why: 'invalid' };
    p = JSON.parse(open(token)) as Payload;
  } catch {
    return { ok: false, why: 'invalid' };
  }
  if (!p || p.v !== 1 || typeof p.n !== 'string' || p.c !== binding.company_id || p.u !== binding.user_id || p.k !== binding.campaign_id) return { ok: false, why: 'invalid' };
  const digest = paramsDigest(binding.params);
  if (p.p !== digest) return { ok: false, why: 'other_parameters' };
  if (!(typeof p.t === 'number' && now - p.t <= CONFIRM_TOKEN_TTL_MS)) return { ok: false, why: 'expired' };
  return { ok: true, key: `console-send:${p.n}`, digest };
}
