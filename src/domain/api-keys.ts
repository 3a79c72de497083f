/**
 * Company API keys (docs/api.md "At a glance").
 *
 * A key looks like `cms_live_<32 base62 chars><6 base62 chars CRC32 checksum>`: the prefix makes leaked
 * keys recognisable to secret scanners and the checksum lets them (and us) reject a mistyped key
 * without a database lookup. Only the SHA-256 of a key is stored; the key itself is shown once.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { crc32 } from 'node:zlib';
import type { Db } from '../db/database.ts';
import { findActiveKeyByHash, insertApiKey, revokeKeyRow, selectCompanyKeys, touchKeyRows, type KeyListRow } from '../db/api-keys.ts';
import { audit, type Actor } from './actor.ts';
import { DomainError, isRowId } from './errors.ts';

export const KEY_PREFIX = 'cms_live_';
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const BODY_LENGTH = 32;
const CHECK_LENGTH = 6;

function checksum(body: string): string {
  let n = crc32(body);
  let out = '';
  for (let i = 0; i < CHECK_LENGTH; i++) {
    out = BASE62[n % 62] + out;
    n = Math.floor(n / 62);
  }
  return out;
}

/** A new random API key (about 190 bits of entropy) with prefix and checksum. */
export function generateApiKey(): string {
  // Rejection sampling: 62 does not divide 256, so bytes >= 248 are dropped to keep every character uniform.
  let body = '';
  while (body.length < BODY_LENGTH) {
    for (const b of randomBytes(BODY_LENGTH)) {
      if (b < 248 && body.length < BODY_LENGTH) body += BASE62[b % 62];
    }
  }
  return KEY_PREFIX + body + checksum(body);
}

/** True when `key` has the prefix, the length and a matching checksum (no database involved). */
export function isWellFormedApiKey(key: string): boolean {
  if (key.length !== KEY_PREFIX.length + BODY_LENGTH + CHECK_LENGTH || !key.startsWith(KEY_PREFIX)) return false;
  const body = key.slice(KEY_PREFIX.length, KEY_PREFIX.length + BODY_LENGTH);
  return checksum(body) === key.slice(-CHECK_LENGTH);
}

/** SHA-256 of the key: what the database stores and looks up. */
export function hashApiKey(key: string): Buffer {
  return createHash('sha256').update(key).digest();
}

/** The first characters of a key, safe to display (e.g. `cms_live_Ab12`). */
export function keyDisplayPrefix(key: string): string {
  return key.slice(0, KEY_PREFIX.length + 4);
}

export interface CreatedKey { key_id: number; api_key: string; label: string | null; prefix: string; created_at: Date }

/** The company an actor may manage keys of: its own (console user, API key), or the one named (operator). */
function keyScope(actor: Actor, companyId?: number): number | undefined {
  return actor.kind === 'operator' ? companyId : actor.companyId;
}

/**
 * Command: issues a new key for company `companyId` (a console actor: its own company only); 404
 * `Company not found` when the company does not exist (or is not the actor's). Audited as `key.create`
 * (target `key:<id>`, `{label, prefix}`; never the key).
 */
export async function createApiKey(db: Db, actor: Actor, companyId: number, label: string | null): Promise<CreatedKey> {
  if (!isRowId(companyId) || keyScope(actor, companyId) !== companyId) throw new DomainError(404, 'Company not found');
  const apiKey = generateApiKey();
  return db.transaction().execute(async (trx) => {
    const row = await insertApiKey(trx, companyId, hashApiKey(apiKey), keyDisplayPrefix(apiKey), label);
    if (!row) throw new DomainError(404, 'Company not found');
    await audit(trx, actor, { action: 'key.create', target: `key:${row.key_id}`, companyId, details: { label: row.label, prefix: row.prefix } });
    return { key_id: row.key_id, api_key: apiKey, label: row.label, prefix: row.prefix, created_at: row.created_at };
  });
}

/** The keys of a company, oldest first, revoked ones included (never the keys themselves). */
export async function listApiKeys(db: Db, companyId: number): Promise<KeyListRow[]> {
  return selectCompanyKeys(db, companyId);
}

/**
 * The service's cache of key lookups (`ApiKeyAuthenticator`, src/http/auth.ts, built once in
 * src/service.ts). Every write that changes what a lookup answers (a revoked key; a company's default
 * country, subscription or connector) takes it and drops it after its write, so a change made in this
 * process applies here at once; callers have nothing to remember.
 */
export interface ApiKeyLookupCache {
  /** Drops every cached lookup. */
  invalidate(): void;
}

/**
 * Command: revokes key `keyId` (a console actor: of its own company only). Idempotent: revoking a
 * revoked key again succeeds and is audited again. Errors (DomainError): 404 `API key not found`. Drops
 * `cache` after the write (`db` must not be a transaction that commits later: a lookup in between would
 * cache the old answer again), then audits `key.revoke` (target `key:<id>`).
 */
export async function revokeApiKey(db: Db, cache: ApiKeyLookupCache, actor: Actor, keyId: number): Promise<{ company_id: number }> {
  if (!isRowId(keyId)) throw new DomainError(404, 'API key not found');
  const revoked = await revokeKeyRow(db, keyId, keyScope(actor), new Date()).finally(() => cache.invalidate());
  if (!revoked) throw new DomainError(404, 'API key not found');
  await audit(db, actor, { action: 'key.revoke', target: `key:${keyId}`, companyId: revoked.company_id });
  return revoked;
}

/** What authentication resolves a key to: the key and the parts of its company the API needs. */
export interface AuthContext {
  keyId: number;
  companyId: number;
  defaultCountry: string;
  subscriptionActive: boolean;
  connectorConnected: boolean;
}

/**
 * Looks a key up by hash. Returns undefined for an unknown or revoked key. The stored hash is compared
 * again in constant time, so the answer never depends on how much of a hash matched.
 */
export async function findApiKey(db: Db, key: string): Promise<AuthContext | undefined> {
  if (!isWellFormedApiKey(key)) return undefined;
  const hash = hashApiKey(key);
  const row = await findActiveKeyByHash(db, hash);
  if (!row || !timingSafeEqual(Buffer.from(row.key_hash), hash)) return undefined;
  return {
    keyId: row.key_id,
    companyId: row.company_id,
    defaultCountry: row.default_country,
    subscriptionActive: row.subscription_active,
    connectorConnected: row.connector_connected,
  };
}

/** Records that keys were used (`last_used_at`), for the console; called off the request path. */
export async function touchApiKeys(db: Db, keyIds: number[], at: Date): Promise<void> {
  if (keyIds.length === 0) return;
  await touchKeyRows(db, keyIds, at);
}
