/**
 * Queries of the console's Contacts pages (issue 11 item 6), always scoped to the session's company:
 * a search by number (digits anywhere in the E.164 form) and the contacts that wrote most recently.
 */
import { sql } from 'kysely';
import type { Db } from '../../db/database.ts';

/** A contact in a list: number, names, opt-out state, last inbound message. */
export interface ContactListRow {
  contact_id: number;
  phone: string;
  first_name: string | null;
  last_name: string | null;
  opted_out: boolean;
  opt_out_source: string | null;
  opt_out_at: Date | null;
  last_inbound_at: Date | null;
}

/** Contacts whose number contains `digits` (at least 4), at most `limit`, by number. */
export async function searchContacts(db: Db, companyId: number, digits: string, limit = 50): Promise<ContactListRow[]> {
  const { rows } = await sql<ContactListRow>`
    SELECT c.contact_id, c.phone, c.first_name, c.last_name, c.opted_out, c.opt_out_source, c.opt_out_at,
           (SELECT max(i.received_at) FROM inbound_messages i WHERE i.contact_id = c.contact_id) AS last_inbound_at
    FROM contacts c
    WHERE c.company_id = ${companyId} AND c.phone LIKE ${'%' + digits.replace(/[^0-9]/g, '') + '%'}
    ORDER BY c.phone LIMIT ${limit}`.execute(db);
  return rows;
}

/** The contacts that sent the company a message most recently, newest first, at most `limit`. */
export async function recentInboundContacts(db: Db, companyId: number, limit = 25): Promise<ContactListRow[]> {
  const { rows } = await sql<ContactListRow>`
    SELECT c.contact_id, c.phone, c.first_name, c.last_name, c.opted_out, c.opt_out_source, c.opt_out_at, r.last_inbound_at
    FROM (SELECT contact_id, max(received_at) AS last_inbound_at FROM inbound_messages WHERE company_id = ${companyId}
          GROUP BY contact_id ORDER BY max(received_at) DESC LIMIT ${limit}) r
    JOIN contacts c ON c.contact_id = r.contact_id AND c.company_id = ${companyId}
    ORDER BY r.last_inbound_at DESC`.execute(db);
  return rows;
}
