/**
 * The statements on `console_secrets` (installation-wide values the console generates once): one
 * statement per function.
 */
import type { Db } from './database.ts';

/** Inserts secret `name` with `value` unless it exists (the first process to start wins). */
export async function insertSecretIfAbsent(db: Db, name: string, value: string): Promise<void> {
  await db.insertInto('console_secrets').values({ name, value }).onConflict((oc) => oc.column('name').doNothing()).execute();
}

/** The value of secret `name`; throws when absent. */
export async function selectSecret(db: Db, name: string): Promise<string> {
  return (await db.selectFrom('console_secrets').select('value').where('name', '=', name).executeTakeFirstOrThrow()).value;
}
