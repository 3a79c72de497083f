/**
 * The statements of a batch's message pages and progress (the rules — cursors, limits, what a phone
 * filter means, the rate — are src/domain/batch-messages.ts's). One statement per function.
 */
import { sql, type Selectable } from 'kysely';
import type { Db } from './database.ts';
import type { MessagesTable, MessageStatus } from './schema.ts';

/** The columns of `messages` a MessageView (src/domain/batches.ts) is made of. */
export const MESSAGE_COLUMNS = ['message_id', 'phone', 'status', 'reason', 'error', 'error_code', 'attempts', 'scheduled_for', 'next_attempt_at',
  'provider_message_id', 'sent_at', 'delivered_at', 'read_at', 'failed_at', 'provider_error', 'expires_at', 'rendered'] as const;

/** A message row of the MESSAGE_COLUMNS, as the statements here answer it. */
export type MessageColumnsRow = Pick<Selectable<MessagesTable>, (typeof MESSAGE_COLUMNS)[number]>;

/** Every message of batch `batchId` (a lower-case UUID) in batch order (seq), its MESSAGE_COLUMNS. */
export async function selectBatchMessages(db: Db, batchId: string) {
  return db.selectFrom('messages').select([...MESSAGE_COLUMNS]).where('batch_id', '=', batchId).orderBy('seq').execute();
}

/** The batch's company and its default country (scoped by `companyId` when given), without counting its messages. */
export async function findBatchCompany(db: Db, batchId: string, companyId?: number): Promise<{ company_id: number; default_country: string } | undefined> {
  let q = db.selectFrom('batches as b').innerJoin('companies as c', 'c.company_id', 'b.company_id')
    .select(['b.company_id', 'c.default_country']).where('b.batch_id', '=', batchId);
  if (companyId !== undefined) q = q.where('b.company_id', '=', companyId);
  return q.executeTakeFirst();
}

/** The numbers of at most `limit` of the company's contacts that contain `digits`. */
export async function contactPhonesContaining(db: Db, companyId: number, digits: string, limit: number): Promise<string[]> {
  const rows = await db.selectFrom('contacts').select('phone')
    .where('company_id', '=', companyId).where('phone', 'like', `%${digits}%`).limit(limit).execute();
  return rows.map((r) => r.phone);
}

/**
 * At most `limit` messages of the batch after seq `after`, in seq order, optionally of one `status` and
 * to `phones` (then through the (company_id, phone) index, so `companyId` is the batch's company).
 */
export async function selectMessagePage(db: Db, q: {
  batchId: string; companyId: number; after?: number; status?: MessageStatus; phones?: string[]; limit: number;
}) {
  let select = db.selectFrom('messages').select([...MESSAGE_COLUMNS, 'seq']).where('batch_id', '=', q.batchId);
  if (q.after !== undefined) select = select.where('seq', '>', q.after);
  if (q.status) select = select.where('status', '=', q.status);
  if (q.phones) select = select.where('company_id', '=', q.companyId).where('phone', 'in', q.phones);
  return select.orderBy('seq').limit(q.limit).execute();
}

/** How many of the batch's messages go to `phones` (non-empty). */
export async function countMessagesTo(db: Db, batchId: string, companyId: number, phones: string[]): Promise<number> {
  const row = await db.selectFrom('messages').select((eb) => eb.fn.countAll<number>().as('n'))
    .where('batch_id', '=', batchId).where('company_id', '=', companyId).where('phone', 'in', phones).executeTakeFirstOrThrow();
  return Number(row.n);
}

/** How many of the batch's messages reached sent or failed (sent_at / failed_at) in (since, until]. */
export async function countFinishedBetween(db: Db, batchId: string, since: Date, until: Date): Promise<number> {
  const { rows } = await sql<{ n: number }>`
    SELECT count(*)::int AS n FROM messages
    WHERE batch_id = ${batchId}::uuid
      AND ((sent_at > ${since} AND sent_at <= ${until}) OR (failed_at > ${since} AND failed_at <= ${until}))`.execute(db);
  return rows[0]?.n ?? 0;
}
