/**
 * What console sign-in is made of: emails (trimmed, lowercased, RFC 5321 length), passwords (10 to 200
 * code points), one-time tokens (32 random bytes, stored only as their SHA-256) and the password hashing
 * (argon2id PHC strings; @node-rs/argon2 defaults: 19 MiB, 2 passes, 1 lane, 16-byte salt, the OWASP
 * recommendation). One `PasswordHashing` is built in src/service.ts and passed to the commands that
 * take or check a password.
 */
import { createHash, randomBytes } from 'node:crypto';
import { hash, verify } from '@node-rs/argon2';

/** Shortest password, in code points (NIST SP 800-63B asks at least 8; we ask 10). */
export const PASSWORD_MIN = 10;
/** Longest password, in code points (bounds the hashing work per request). */
export const PASSWORD_MAX = 200;
/** Longest email accepted (RFC 5321 path limit). */
export const EMAIL_MAX = 254;

const EMAIL_RE = /^[^\s@<>()[\]\\,;:"]+@[^\s@<>()[\]\\,;:"]+\.[^\s@<>()[\]\\,;:"]+$/;

/** SHA-256 of a token (invitation, reset link or session): what the database stores and looks up. */
export function hashToken(token: string): Buffer {
  return createHash('sha256').update(token).digest();
}

/** A new random token: 32 bytes (256 bits), base64url (43 characters). */
export function newToken(): string {
  return randomBytes(32).toString('base64url');
}

/** True when `token` has a plausible length (20 to 100 characters) to be looked up at all. */
export function plausibleToken(token: string): boolean {
  return token.length >= 20 && token.length <= 100;
}

/** Trims and lowercases an email; undefined when it does not look like one or is too long. */
export function normaliseEmail(email: string): string | undefined {
  const e = email.trim().toLowerCase();
  return e.length <= EMAIL_MAX && EMAIL_RE.test(e) ? e : undefined;
}

/** Why a new password is refused, or undefined when it is acceptable. */
export function passwordProblem(password: string): string | undefined {
  const n = [...password].length;
  if (n < PASSWORD_MIN) return `The password must have at least ${PASSWORD_MIN} characters.`;
  if (n > PASSWORD_MAX) return `The password must have at most ${PASSWORD_MAX} characters.`;
  return undefined;
}

/**
 * How console passwords are hashed and checked: argon2id PHC strings. One is built in service.ts and
 * passed to the functions that take or check a password.
 */
export interface PasswordHashing {
  /** argon2id PHC string of `password`. */
  hash(password: string): Promise<string>;
  /** True when `password` matches the PHC string; false for a wrong password or a malformed hash. */
  verify(passwordHash: string, password: string): Promise<boolean>;
  /**
   * Verifies `password` against a hash of a random secret made once by this instance (always false),
   * so that an unknown email takes about as long to refuse as a wrong password.
   */
  verifyDummy(password: string): Promise<false>;
}

/** The cost of new hashes: argon2's memory in KiB and its passes. */
export interface PasswordHashCost { memoryCost: number; timeCost: number }

/**
 * The low cost tests give their services (1 MiB, one pass: about 0.1 ms instead of 11 ms of CPU; test
 * users are made by the hundred and sign in as often). Never a service's own choice.
 */
export const TEST_PASSWORD_HASH_COST: PasswordHashCost = Object.freeze({ memoryCost: 1024, timeCost: 1 });

/**
 * argon2id hashing (@node-rs/argon2): new hashes at `cost`, by default the library's defaults (see the
 * module comment), which the service always uses. Verification reads the cost from the stored hash,
 * so hashes of any cost verify the same way.
 */
export function argon2Hashing(cost?: PasswordHashCost): PasswordHashing {
  const options = cost ? { memoryCost: cost.memoryCost, timeCost: cost.timeCost } : undefined;
  let dummyHash: Promise<string> | undefined; // made on the first unknown email
  const hashing: PasswordHashing = {
    hash: (password) => (options ? hash(password, options) : hash(password)),
    async verify(passwordHash, password) {
      try {
        return await verify(passwordHash, password);
      } catch {
        return false;
      }
    },
    async verifyDummy(password) {
      dummyHash ??= hashing.hash(newToken());
      await hashing.verify(await dummyHash, password);
      return false;
    },
  };
  return hashing;
}
