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
 *
 * The library defines the signature; its own HMAC is pure JavaScript (fast-sha256): 14 µs a signature
 * of a 250-byte body on the benchmark machine, about 5 % of a worker's CPU profile in the delivery
 * benchmark (docs/benchmarks.md), against 2.3 µs for Node's HMAC with a key made once. The signer
 * below computes the library's exact signature with Node's HMAC: same bytes in
 * (`${id}.${seconds}.${body}` as UTF-8, a Buffer body decoded as the library decodes it), same
 * HMAC-SHA256, same base64. test/delivery/sign.test.ts checks
 * it against the library's own `sign` for random ids, times, bodies and keys, and that the library's
 * `verify` accepts it. `nativeHmac: false` signs with the library's own code.
 */
import { createHmac, createSecretKey, type KeyObject } from 'node:crypto';
import { Webhook } from 'standardwebhooks';

/** Prefix of Standard Webhooks secrets: `whsec_` + base64 of the key bytes. */
export const WHSEC_PREFIX = 'whsec_';

/** The HMAC key of a secret: `whsec_` + base64 → those bytes (padding optional); else its UTF-8 bytes. */
export function webhookKey(secret: string): Buffer {
  if (secret.startsWith(WHSEC_PREFIX)) return Buffer.from(secret.slice(WHSEC_PREFIX.length), 'base64');
  return Buffer.from(secret, 'utf8');
}

/** The library's Webhook whose `sign` uses Node's HMAC-SHA256; the same signature, byte for byte. */
class NativeHmacWebhook extends Webhook {
  /** A KeyObject made once: on Node 24 `createHmac` with a Buffer key took 17 µs, with a KeyObject 2. */
  readonly #key: KeyObject;

  constructor(key: Buffer) {
    super(key, { format: 'raw' });
    this.#key = createSecretKey(key);
  }

  /** `v1,` + base64(HMAC-SHA256(key, `${msgId}.${seconds}.${payload}`)), as the library's own `sign`. */
  override sign(msgId: string, timestamp: Date, payload: string | Buffer): string {
    if (typeof payload !== 'string') {
      if (!Buffer.isBuffer(payload)) throw new Error('Expected payload to be of type string or Buffer.');
      payload = payload.toString();
    }
    const seconds = Math.floor(timestamp.getTime() / 1000);
    return `v1,${createHmac('sha256', this.#key).update(`${msgId}.${seconds}.${payload}`, 'utf8').digest('base64')}`;
  }
}

/**
 * A `standardwebhooks` signer for `secret` (key as webhookKey derives it, handed over as raw bytes so
 * that both kinds of secret sign exactly as receivers verify them). `nativeHmac` (default true): the
 * library's signature computed with Node's HMAC (see the module comment); false: the library's own
 * code. Throws when the key is empty.
 */
export function createSigner(secret: string, opts: { nativeHmac?: boolean } = {}): Webhook {
  const key = webhookKey(secret);
  return opts.nativeHmac === false ? new Webhook(key, { format: 'raw' }) : new NativeHmacWebhook(key);
}
