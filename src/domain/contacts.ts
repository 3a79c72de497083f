/**
 * Contacts (decisions.md §5-6): a contact is the pair (company, E.164 number). Bulk upsert serves the
 * operator import (PUT /admin/companies/{id}/contacts) and the send pipeline (4.3 creates contacts,
 * replaces given names and merges variables; 4.4 creates contacts by phone only).
 */
import { sql } from 'kysely';
import type { Db } from '../db/database.ts';
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
 */
export async function upsertContacts(db: Db, companyId: number, writes: ContactWrite[]): Promise<StoredContact[]> {
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
    INSERT INTO contacts AS c (company_id, phone, sha256_plus, sha256_bare, first_name, last_name, variables, opted_out)
    SELECT ${companyId}, t.phone, decode(t.plus, 'hex'), decode(t.bare, 'hex'), t.first_name, t.last_name, t.variables, coalesce(t.opted_out, false)
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
      UPDATE contacts c SET opted_out = t.opted_out
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
