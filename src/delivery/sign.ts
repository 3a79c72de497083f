/**
 * Signing keys of outbound delivery (Standard Webhooks, signed with the `standardwebhooks` library):
 *
 *   webhook-signature: `v1,` + base64(HMAC-SHA256(key, `${id}.${timestamp}.${body}`))
 *
 * Key from a secret: `whsec_<base64>` → the base64-decoded bytes (receivers verify with
 * `new Webhook(secret)`); any other secret (message webhooks accept them) → its UTF-8 bytes, never
 * base64-decoded (receivers verify with `new Webhook(Buffer.from(secret, 'utf8'), { format: 'raw' })`;
 * the library reads a string key as Latin-1, the same bytes for ASCII only). Event endpoint secrets
 * are always `whsec_`.
 */
import { Webhook } from 'standardwebhooks';

/** Prefix of Standard Webhooks secrets: `whsec_` + base64 of the key bytes. */
export const WHSEC_PREFIX = 'whsec_';

/** The HMAC key of a secret: `whsec_` + base64 → those bytes (padding optional); else its UTF-8 bytes. */
export function webhookKey(secret: string): Buffer {
  if (secret.startsWith(WHSEC_PREFIX)) return Buffer.from(secret.slice(WHSEC_PREFIX.length), 'base64');
  return Buffer.from(secret, 'utf8');
}

/**
 * A `standardwebhooks` signer for `secret` (key as webhookKey derives it, handed over as raw bytes so
 * that both kinds of secret sign exactly as receivers verify them). Throws when the key is empty.
 */
export function createSigner(secret: string): Webhook {
  return new Webhook(webhookKey(secret), { format: 'raw' });
}
