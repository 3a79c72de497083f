/**
 * SQL of the contact view (issue 11 item 6; receipts-and-events.md §3): one contact with its opt-out
 * state, its inbound messages and the messages sent to it. One statement per function, each scoped to
 * the company, so another company's contact is never found.
 */
import { sql } from 'kysely';
import type { Db } from './database.ts';

/** A contact row as the view shows it. */
export interface ContactRow {
  contact_id: number;
  phone: string;
  first_name: string | null;
  last_name: string | null;
  variables: Record<string, unknown>;
  opted_out: boolean;
  opt_out_source: string | null;
  opt_out_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

/** The company's contact with this E.164 number or contact id (when `contactId` is given), or undefined. */
export async function findContact(db: Db, companyId: number, by: { phone: string } | { contactId: number }): Promise<ContactRow | undefined> {
  let q = db.selectFrom('contacts')
    .select(['contact_id', 'phone', 'first_name', 'last_name', 'variables', 'opted_out', 'opt_out_source', 'opt_out_at', 'created_at', 'updated_at'])
    .where('company_id', '=', companyId);
  q = 'phone' in by ? q.where('phone', '=', by.phone) : q.where('contact_id', '=', by.contactId);
  const row = await q.executeTakeFirst();
  return row ? { ...row, contact_id: Number(row.contact_id), variables: (row.variables ?? {}) as Record<string, unknown> } as ContactRow : undefined;
}

/** An inbound message of a contact. */
export interface InboundView { provider_message_id: string; type: string; text: string | null; payload: string | null; received_at: Date }

/** The contact's inbound messages, newest first, at most `limit`. */
export async function listInbound(db: Db, companyId: number, contactId: number, limit: number): Promise<InboundView[]> {
  return db.selectFrom('inbound_messages').select(['provider_message_id', 'type', 'text', 'payload', 'received_at'])
    .where('company_id', '=', companyId).where('contact_id', '=', contactId)
    .orderBy('received_at', 'desc').orderBy('inbound_id', 'desc').limit(limit).execute();
}

/** A message sent (or to be sent) to a contact. */
export interface SentView {
  message_id: string; batch_id: string; kind: string; status: string; reason: string | null; error: string | null; error_code: string | null;
  provider_message_id: string | null; sent_at: Date | null; delivered_at: Date | null; read_at: Date | null; failed_at: Date | null; created_at: Date;
}

/** The newest messages of the company to this number (any batch), at most `limit`. */
export async function listSentTo(db: Db, companyId: number, phone: string, limit: number): Promise<SentView[]> {
  const { rows } = await sql<SentView>`
    SELECT m.message_id, m.batch_id, b.kind, m.status, m.reason, m.error, m.error_code, m.provider_message_id,
           m.sent_at, m.delivered_at, m.read_at, m.failed_at, b.created_at
    FROM messages m JOIN batches b ON b.batch_id = m.batch_id
    WHERE m.company_id = ${companyId} AND m.phone = ${phone}
    ORDER BY b.created_at DESC, m.seq LIMIT ${limit}`.execute(db);
  return rows;
}
