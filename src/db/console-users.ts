/**
 * The statements on `console_users` (src/domain/users/*.ts decides who may do what): one statement
 * per function, deciding nothing. Emails are given already normalised (lowercased).
 */
import type { Db } from './database.ts';
import type { ConsoleRole } from './schema.ts';

/** A console user as commands see it. */
export interface ConsoleUserRow { user_id: number; company_id: number; email: string; role: ConsoleRole }
/** A console user as lists show it. */
export interface ListedUserRow { user_id: number; email: string; role: ConsoleRole; created_at: Date }

/** The user of `email` with its password hash, or undefined. */
export async function selectUserCredentials(db: Db, email: string): Promise<(ConsoleUserRow & { password_hash: string }) | undefined> {
  return db.selectFrom('console_users').select(['user_id', 'company_id', 'email', 'role', 'password_hash']).where('email', '=', email).executeTakeFirst();
}

/** The password hash of user `userId`, or undefined. */
export async function selectPasswordHash(db: Db, userId: number): Promise<string | undefined> {
  return (await db.selectFrom('console_users').select('password_hash').where('user_id', '=', userId).executeTakeFirst())?.password_hash;
}

/** True when a user has `email` (in any company). */
export async function userEmailExists(db: Db, email: string): Promise<boolean> {
  return (await db.selectFrom('console_users').select('user_id').where('email', '=', email).executeTakeFirst()) !== undefined;
}

/** The users of a company, by email. */
export async function selectCompanyUsers(db: Db, companyId: number): Promise<ListedUserRow[]> {
  return db.selectFrom('console_users').select(['user_id', 'email', 'role', 'created_at'])
    .where('company_id', '=', companyId).orderBy('email').execute();
}

/** One user by id or by (normalised) email, of company `companyId` when given; undefined if none. */
export async function selectUser(db: Db, by: { userId: number; companyId?: number } | { email: string; companyId?: number }): Promise<(ListedUserRow & { company_id: number; password_changed_at: Date }) | undefined> {
  let q = db.selectFrom('console_users').select(['user_id', 'company_id', 'email', 'role', 'created_at', 'password_changed_at']);
  q = 'userId' in by ? q.where('user_id', '=', by.userId) : q.where('email', '=', by.email);
  if (by.companyId !== undefined) q = q.where('company_id', '=', by.companyId);
  return q.executeTakeFirst();
}

/** The company of user `userId` (of company `companyId` when given), or undefined. */
export async function selectUserCompany(db: Db, userId: number, companyId: number | undefined): Promise<number | undefined> {
  let q = db.selectFrom('console_users').select(['company_id']).where('user_id', '=', userId);
  if (companyId !== undefined) q = q.where('company_id', '=', companyId);
  return (await q.executeTakeFirst())?.company_id;
}

/** User `userId` of company `companyId`, or undefined. */
export async function selectCompanyUser(db: Db, userId: number, companyId: number): Promise<ConsoleUserRow | undefined> {
  return db.selectFrom('console_users').select(['user_id', 'company_id', 'email', 'role'])
    .where('user_id', '=', userId).where('company_id', '=', companyId).executeTakeFirst();
}

/** How many owners company `companyId` has besides user `userId`. */
export async function countOtherOwners(db: Db, companyId: number, userId: number): Promise<number> {
  const row = await db.selectFrom('console_users').select((eb) => eb.fn.countAll<string>().as('n'))
    .where('company_id', '=', companyId).where('role', '=', 'owner').where('user_id', '!=', userId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Inserts a user unless its email exists; the new user, or undefined when the email was taken. */
export async function insertUserIfNew(db: Db, values: { company_id: number; email: string; role: ConsoleRole; password_hash: string; at: Date }): Promise<ConsoleUserRow | undefined> {
  return db.insertInto('console_users')
    .values({ company_id: values.company_id, email: values.email, role: values.role, password_hash: values.password_hash, created_at: values.at, password_changed_at: values.at })
    .onConflict((oc) => oc.column('email').doNothing())
    .returning(['user_id', 'company_id', 'email', 'role'])
    .executeTakeFirst();
}

/** Sets user `userId`'s password hash and `password_changed_at`; the user, or undefined. */
export async function updateUserPassword(db: Db, userId: number, passwordHash: string, at: Date): Promise<ConsoleUserRow | undefined> {
  return db.updateTable('console_users').set({ password_hash: passwordHash, password_changed_at: at })
    .where('user_id', '=', userId)
    .returning(['user_id', 'company_id', 'email', 'role'])
    .executeTakeFirst();
}

/** Sets user `userId`'s role. */
export async function updateUserRole(db: Db, userId: number, role: ConsoleRole): Promise<void> {
  await db.updateTable('console_users').set({ role }).where('user_id', '=', userId).execute();
}

/** Deletes user `userId` (its sessions and reset links go with it: foreign keys). */
export async function deleteUserRow(db: Db, userId: number): Promise<void> {
  await db.deleteFrom('console_users').where('user_id', '=', userId).execute();
}
