/**
 * Provider secrets at rest: sealed with AES-256-GCM under a key from the environment
 * (SECRETS_KEY) or, on the embedded default, a key generated into the data directory (mode 0600).
 * Sealed text: `v1.<iv>.<tag>.<ciphertext>`, each part base64url.
 */
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

export interface SecretBox {
  seal(plaintext: string): string;
  /** Throws when the text was not sealed with this key or was altered. */
  open(sealed: string): string;
}

/** A box keyed by any string (hashed to 256 bits). */
export function secretBox(keyMaterial: string): SecretBox {
  const key = createHash('sha256').update(keyMaterial).digest();
  return {
    seal(plaintext) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      const ct = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
      return ['v1', iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), ct.toString('base64url')].join('.');
    },
    open(sealed) {
      const [v, iv, tag, ct] = sealed.split('.');
      if (v !== 'v1' || !iv || !tag || ct === undefined) throw new Error('not a sealed secret');
      const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
      decipher.setAuthTag(Buffer.from(tag, 'base64url'));
      return Buffer.concat([decipher.update(Buffer.from(ct, 'base64url')), decipher.final()]).toString('utf8');
    },
  };
}
