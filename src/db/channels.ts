/**
 * SQL of a company's channel as stored (`companies.channel`, docs/operator-api.md PUT .../channel): the
 * JSON value that names its provider and the provider's settings (sealed secrets included). One
 * statement per function.
 */
import type { Db } from './database.ts';

/** The stored channel JSON of a company (`companies.channel`), or undefined for an unknown company. */
export async function companyChannel(db: Db, companyId: number): Promise<Record<string, unknown> | undefined> {
  const row = await db.selectFrom('companies').select('channel').where('company_id', '=', companyId).executeTakeFirst();
  return row ? (row.channel as Record<string, unknown>) : undefined;
}
