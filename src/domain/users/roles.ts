/**
 * The roles of a console user (migration 013): `owner` (everything), `developer`, `marketer`. What each
 * may do: src/console/permissions.ts. A company always keeps at least one owner (src/domain/users/accounts.ts).
 */
import type { ConsoleRole } from '../../db/schema.ts';

/** The roles, in the order pages list them. */
export const ROLES = ['owner', 'developer', 'marketer'] as const satisfies readonly ConsoleRole[];
export type Role = typeof ROLES[number];

/** True for one of {@link ROLES}. */
export function isRole(value: unknown): value is Role {
  return typeof value === 'string' && (ROLES as readonly string[]).includes(value);
}
