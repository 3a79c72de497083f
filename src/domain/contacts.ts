/**
 * Contacts (decisions.md §5-6): a contact is the pair (company, E.164 number). Bulk upsert serves the
 * operator import (PUT /admin/companies/{id}/contacts) and the send pipeline (4.3 creates contacts,
 * replaces given names and merges variables; 4.4 creates contacts by phone only).
 */
import { sql } from 'kysely';
import type { Db } from '../db/database.ts';
import { findContact, listInbound, listSentTo, type ContactRow, type InboundView, type SentView } from '../db/contacts.ts';
import { DomainError } from './errors.ts';
import { phoneDigests, toE164 } from './phone.ts';

/** One contact to write. Absent (undefined/null) fields keep what is stored; variables are merged. */
export interface ContactWrite {
  phone: string; // E.164
  first_name?: string | null;
  last_name?: string | null;
  variables?: Record<string, unknown> | null;
  opted_out?: boolean | null;
}

export interface StoredContact {
  contact_id: number;
  phone: string;
  first_name: string | null;
  last_name: string | null;
  variables: Record<string, unknown>;
  opted_out: boolean;
  created: boolean;
}

/** Merges writes for the same phone (later fields win, variables merged) so each phone appears once. */
export function mergeWrites(writes: ContactWrite[]): ContactWrite[] {
  const byPhone = new Map<string, ContactWrite>();
  for (const w of writes) {
    const prev = byPhone.get(w.phone);
    if (!prev) {
      byPhone.set(w.phone, { ...w });
      continue;
    }
    if (w.first_name != null) prev.first_name = w.first_name;
    if (w.last_name != null) prev.last_name = w.last_name;
    if (w.opted_out != null) prev.opted_out = w.opted_out;
    if (w.variables) prev.variables = Object.assign(Object.create(null), prev.variables ?? {}, w.variables);
  }
  return [...byPhone.values()];
}

/**
 * Inserts missing contacts and updates existing ones (one statement, a second only when opt-outs are
 * given); returns every written contact as stored afterwards. Phones must already be E.164; duplicates
 * are merged first. Run it inside a transaction when both statements must commit together.
 * An opt-out state that is set or changed records `opt_out_source` (`source`, default 'operator') and
 * `opt_out_at` = now (receipts-and-events.md §3); an unchanged one keeps both.
 */
export async function upsertContacts(db: Db, companyId: number, writes: ContactWrite[], source = 'operator'): Promise<StoredContact[]> {
  const rows = mergeWrites(writes);
  if (rows.length === 0) return [];
  const phones: string[] = [];
  const plus: string[] = [];
  const bare: string[] = [];
  const first: (string | null)[] = [];
  const last: (string | null)[] = [];
  const vars: string[] = [];
  const opted: (boolean | null)[] = [];
  for (const r of rows) {
    const d = phoneDigests(r.phone);
    phones.push(r.phone);
    plus.push(d.plus.toString('hex'));
    bare.push(d.bare.toString('hex'));
    first.push(r.first_name ?? null);
    last.push(r.last_name ?? null);
    vars.push(JSON.stringify(r.variables ?? {}));
    opted.push(r.opted_out ?? null);
  }
  const { rows: out } = await sql<StoredContact>`
    INSERT INTO contacts AS c (company_id, phone, sha256_plus, sha256_bare, first_name, last_name, variables, opted_out, opt_out_source, opt_out_at)
    SELECT ${companyId}, t.phone, decode(t.plus, 'hex'), decode(t.bare, 'hex'), t.first_name, t.last_name, t.variables, coalesce(t.opted_out, false),
      CASE WHEN t.opted_out THEN ${source}::text END, CASE WHEN t.opted_out THEN now() END
    FROM unnest(${phones}::text[], ${plus}::text[], ${bare}::text[], ${first}::text[], ${last}::text[], ${vars}::jsonb[], ${opted}::bool[])
      AS t(phone, plus, bare, first_name, last_name, variables, opted_out)
    ON CONFLICT (company_id, phone) DO UPDATE SET
      first_name = coalesce(EXCLUDED.first_name, c.first_name),
      last_name  = coalesce(EXCLUDED.last_name, c.last_name),
      variables  = c.variables || EXCLUDED.variables,
      updated_at = now()
    RETURNING contact_id, phone, first_name, last_name, variables, opted_out, (xmax = 0) AS created`.execute(db);
  // An existing contact's opt-out changes only where the write gives one (the insert above cannot tell
  // "not given" from false, the column being NOT NULL).
  if (opted.some((o) => o !== null)) {
    const changed = await sql<{ contact_id: number; opted_out: boolean }>`
      UPDATE contacts c SET opted_out = t.opted_out, opt_out_source = ${source}::text, opt_out_at = now()
      FROM unnest(${phones}::text[], ${opted}::bool[]) AS t(phone, opted_out)
      WHERE c.company_id = ${companyId} AND c.phone = t.phone AND t.opted_out IS NOT NULL AND c.opted_out <> t.opted_out
      RETURNING c.contact_id, c.opted_out`.execute(db);
    const byId = new Map(changed.rows.map((r) => [r.contact_id, r.opted_out]));
    for (const c of out) if (byId.has(c.contact_id)) c.opted_out = byId.get(c.contact_id)!;
  }
  return out;
}

export interface ImportRow {
  phone: string;
  first_name?: string | null;
  last_name?: string | null;
  variables?: Record<string, unknown> | null;
  opted_out?: boolean | null;
}

/** Operator import: normalises phones (company default country), upserts, counts the outcome. */
export async function importContacts(
  db: Db, companyId: number, defaultCountry: string, items: ImportRow[],
): Promise<{ created: number; updated: number; invalid: number }> {
  const writes: ContactWrite[] = [];
  let invalid = 0;
  for (const item of items) {
    const e164 = toE164(item.phone, defaultCountry);
    if (!e164) {
      invalid++;
      continue;
    }
    writes.push({ ...item, phone: e164 });
  }
  const stored = await upsertContacts(db, companyId, writes);
  const created = stored.filter((c) => c.created).length;
  return { created, updated: stored.length - created, invalid };
}

/** Inbound and sent messages shown per contact (newest first). */
export const CONTACT_VIEW_LIMIT = 100;

/** One contact as the operator API and console show it (issue 11 item 6). */
export interface ContactView extends ContactRow { inbound: InboundView[]; messages: SentView[] }

/**
 * The company's contact named by a phone number in any form its default country parses (or, with
 * `allowId`, by its numeric contact id when the text is no valid number), with its inbound messages and the messages sent to it, each
 * newest first and at most CONTACT_VIEW_LIMIT. 404 `Contact not found` when unknown, malformed or
 * another company's.
 */
export async function getContactView(db: Db, companyId: number, defaultCountry: string, key: string, allowId = false): Promise<ContactView> {
  // A valid number wins; with `allowId`, digits that are no valid number name a contact id.
  const e164 = toE164(key.trim(), defaultCountry);
  const id = !e164 && allowId && /^[0-9]{1,15}$/.test(key) ? Number(key) : undefined;
  if (id === undefined && !e164) throw new DomainError(404, 'Contact not found');
  const contact = await findContact(db, companyId, e164 ? { phone: e164 } : { contactId: id! });
  if (!contact) throw new DomainError(404, 'Contact not found');
  const [inbound, messages] = await Promise.all([
    listInbound(db, companyId, contact.contact_id, CONTACT_VIEW_LIMIT),
    listSentTo(db, companyId, contact.phone, CONTACT_VIEW_LIMIT),
  ]);
  return { ...contact, inbound, messages };
}
