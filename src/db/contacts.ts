/**
 * SQL of the contacts (docs/decisions.md#9-whatsapp-webhooks-in): one contact with
 * its opt-out state, segments and history, its inbound messages and the messages sent to it; the paged
 * list and search (by number digits or a name prefix, keyset on the phone, a bounded window of
 * contacts per search page); the export's pages. One
 * statement per function, each scoped to the company, so another company's contact is never found.
 * Erased contacts (migration 012, `erased_at`) are never found nor listed.
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
  /** The latest time the contact wrote to the company (migration 017), or null. */
  last_inbound_at: Date | null;
  /** Its tags, sorted (migration 026). */
  tags: string[];
  /** The latest time a message to it reached sent / delivered / read (migration 026), or null. */
  last_sent_at: Date | null;
  last_delivered_at: Date | null;
  last_read_at: Date | null;
  /** ISO 3166 alpha-2 of its number; '' none; null not computed yet (migration 026). */
  country: string | null;
}

/** The company's contact with this E.164 number or contact id (when `contactId` is given), or undefined. */
export async function findContact(db: Db, companyId: number, by: { phone: string } | { contactId: number }): Promise<ContactRow | undefined> {
  let q = db.selectFrom('contacts')
    .select(['contact_id', 'phone', 'first_name', 'last_name', 'variables', 'opted_out', 'opt_out_source', 'opt_out_at', 'created_at', 'updated_at', 'last_inbound_at',
      'tags', 'country',
      sql<Date | null>`(SELECT max(m.sent_at) FROM messages m WHERE m.company_id = contacts.company_id AND m.phone = contacts.phone AND m.status IN ('sent', 'delivered', 'read'))`.as('last_sent_at'),
      sql<Date | null>`(SELECT max(m.delivered_at) FROM messages m WHERE m.company_id = contacts.company_id AND m.phone = contacts.phone AND m.status IN ('delivered', 'read'))`.as('last_delivered_at'),
      sql<Date | null>`(SELECT max(m.read_at) FROM messages m WHERE m.company_id = contacts.company_id AND m.phone = contacts.phone AND m.status = 'read')`.as('last_read_at')])
    .where('company_id', '=', companyId).where(sql<boolean>`erased_at IS NULL`);
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

/** A contact in a list: number, names, opt-out state, last inbound message, tags. */
export interface ContactListRow {
  contact_id: number;
  phone: string;
  first_name: string | null;
  last_name: string | null;
  opted_out: boolean;
  opt_out_source: string | null;
  opt_out_at: Date | null;
  last_inbound_at: Date | null;
  /** Its tags, sorted (migration 026). */
  tags: string[];
}

/**
 * What a contact list shows: every contact, those whose E.164 number contains `digits` (at least 4), or
 * those each of whose `words` is a case-insensitive prefix of the first or the last name (indexed:
 * migration 012). `listContacts` may narrow any of them to the contacts with one tag.
 */
export type ContactFilter = { all: true } | { digits: string } | { words: string[] };

/**
 * One page of a contact list and the cursor of the next (the last phone shown, or with a search the
 * last phone searched), or null at the end.
 */
export interface ContactPage { rows: ContactListRow[]; next: string | null }

/**
 * Most contacts one page of a search (a `q` or a `tag`) looks at, in phone order after the cursor
 * (docs/contacts.md "Search"): a search that finds fewer matches than a page
 * among them answers those (possibly none) and, when contacts remain, the last phone it looked at as
 * the cursor of the next page. Bounds the cost of every page whatever the company's size and however
 * rare the match (measured on the embedded database with 100,000 contacts of one company: a search
 * matching nothing took 95-160 ms reading them all; one page now reads at most this many).
 */
export const SEARCH_SCAN_ROWS = 20_000;

const likeEscape = (s: string) => s.replace(/[\\%_]/g, (c) => `\\${c}`);

/**
 * The company's contacts matching `filter` (and, with `tag`, having that tag), by phone, `limit`
 * (1-500) after the phone `after`: a keyset page (the unique index on (company_id, phone)). Every
 * contact (no filter, no tag): the page itself. A search: among at most {@link SEARCH_SCAN_ROWS}
 * contacts after `after` (one statement; the window is read in phone order through the same index),
 * so `rows` may be fewer than `limit`, or none, while `next` is not null.
 */
export async function listContacts(db: Db, companyId: number, filter: ContactFilter, after: string | null, limit: number, tag?: string): Promise<ContactPage> {
  const n = Math.min(Math.max(limit, 1), 500);
  const conditions = [];
  if (tag) conditions.push(sql`c.tags @> ARRAY[${tag}::text]`);
  if ('digits' in filter) conditions.push(sql`c.phone LIKE ${'%' + filter.digits.replace(/[^0-9]/g, '') + '%'}`);
  else if ('words' in filter) {
    for (const w of filter.words) {
      const p = likeEscape(w.toLowerCase()) + '%';
      conditions.push(sql`(lower(c.first_name) LIKE ${p} OR lower(c.last_name) LIKE ${p})`);
    }
  }
  const columns = sql`c.contact_id, c.phone, c.first_name, c.last_name, c.opted_out, c.opt_out_source, c.opt_out_at, c.tags,
           (SELECT max(i.received_at) FROM inbound_messages i WHERE i.contact_id = c.contact_id) AS last_inbound_at`;
  if (conditions.length === 0) {
    const { rows } = await sql<ContactListRow>`
      SELECT ${columns}
      FROM contacts c
      WHERE c.company_id = ${companyId} AND c.erased_at IS NULL AND c.phone > ${after ?? ''}
      ORDER BY c.phone LIMIT ${n + 1}`.execute(db);
    const more = rows.length > n;
    const page = rows.slice(0, n).map((r) => ({ ...r, contact_id: Number(r.contact_id) }));
    return { rows: page, next: more ? page[page.length - 1].phone : null };
  }
  const { rows } = await sql<ContactListRow & { scanned: number; scanned_to: string | null }>`
    WITH w AS MATERIALIZED (
      SELECT c.contact_id, c.phone, c.first_name, c.last_name, c.tags FROM contacts c
      WHERE c.company_id = ${companyId} AND c.erased_at IS NULL AND c.phone > ${after ?? ''}
      ORDER BY c.phone LIMIT ${SEARCH_SCAN_ROWS}),
    hit AS (SELECT c.contact_id FROM w c WHERE ${sql.join(conditions, sql` AND `)} ORDER BY c.phone LIMIT ${n + 1})
    SELECT s.scanned, s.scanned_to, ${columns}
    FROM (SELECT count(*)::int AS scanned, max(phone) AS scanned_to FROM w) s
    LEFT JOIN (hit JOIN contacts c ON c.contact_id = hit.contact_id) ON true
    ORDER BY c.phone`.execute(db);
  const found = rows.filter((r) => r.contact_id !== null);
  const page = found.slice(0, n).map(({ scanned: _s, scanned_to: _t, ...r }) => ({ ...r, contact_id: Number(r.contact_id) }));
  const window = rows[0];
  const next = found.length > n ? page[page.length - 1].phone : window.scanned >= SEARCH_SCAN_ROWS ? window.scanned_to : null;
  return { rows: page, next };
}

/** A segment the contact belongs to. */
export interface ContactSegment { segment_id: number; name: string; added_at: Date }

/** The contact's segments, by name. */
export async function listContactSegments(db: Db, companyId: number, contactId: number): Promise<ContactSegment[]> {
  const { rows } = await sql<ContactSegment>`
    SELECT s.segment_id, s.name, m.added_at FROM segment_members m JOIN segments s ON s.segment_id = m.segment_id
    WHERE m.contact_id = ${contactId} AND s.company_id = ${companyId} ORDER BY s.name, s.segment_id`.execute(db);
  return rows;
}

/** An audit entry about a contact (its history: edits, opt-outs by hand). */
export interface ContactHistoryEntry { at: Date; actor: string; action: string; details: Record<string, unknown> }

/** The newest audit entries naming the contact (`contact:<id>`), at most `limit`. */
export async function listContactHistory(db: Db, companyId: number, contactId: number, limit: number): Promise<ContactHistoryEntry[]> {
  const { rows } = await sql<ContactHistoryEntry>`
    SELECT at, actor, action, details FROM audit_log
    WHERE company_id = ${companyId} AND target = ${`contact:${contactId}`}
    ORDER BY entry_id DESC LIMIT ${limit}`.execute(db);
  return rows;
}

/** A contact as the export writes it, with the facts the service keeps (migration 026). */
export interface ExportRow {
  phone: string; first_name: string | null; last_name: string | null; opted_out: boolean;
  opt_out_source: string | null; opt_out_at: Date | null; variables: Record<string, unknown>; tags: string[];
  country: string | null; last_inbound_at: Date | null; last_sent_at: Date | null; last_delivered_at: Date | null; last_read_at: Date | null;
}

/**
 * One keyset page of the export: the company's contacts after the phone `after`, by phone. The last
 * sent / delivered / read times come from the contact's messages as in findContact (one probe of the
 * messages' `(company_id, phone)` index per contact).
 */
export async function exportPage(db: Db, companyId: number, after: string, limit: number): Promise<ExportRow[]> {
  const { rows } = await sql<ExportRow>`
    SELECT c.phone, c.first_name, c.last_name, c.opted_out, c.opt_out_source, c.opt_out_at, c.variables, c.tags, c.country, c.last_inbound_at,
           f.last_sent_at, f.last_delivered_at, f.last_read_at
    FROM contacts c
    CROSS JOIN LATERAL (
      SELECT max(m.sent_at) FILTER (WHERE m.status IN ('sent', 'delivered', 'read')) AS last_sent_at,
             max(m.delivered_at) FILTER (WHERE m.status IN ('delivered', 'read')) AS last_delivered_at,
             max(m.read_at) FILTER (WHERE m.status = 'read') AS last_read_at
      FROM messages m WHERE m.company_id = c.company_id AND m.phone = c.phone) f
    WHERE c.company_id = ${companyId} AND c.erased_at IS NULL AND c.phone > ${after}
    ORDER BY c.phone LIMIT ${limit}`.execute(db);
  return rows;
}

/**
 * One bounded step of reading the variable names the company's live contacts use (the export's extra
 * columns): the distinct names of the next `limit` contacts after contact id `after`, in contact id
 * order (index `contacts_live_id`), and the last contact id read (null: none was left).
 */
export async function variableNamesStep(db: Db, companyId: number, after: number, limit: number): Promise<{ names: string[]; last: number | null }> {
  const { rows } = await sql<{ last: number | string | null; names: string[] | null }>`
    WITH chunk AS MATERIALIZED (
      SELECT contact_id, variables FROM contacts WHERE company_id = ${companyId}::int AND erased_at IS NULL AND contact_id > ${after}::int8
      ORDER BY contact_id LIMIT ${limit}::int)
    SELECT (SELECT max(contact_id) FROM chunk) AS last,
      ARRAY(SELECT DISTINCT jsonb_object_keys(variables) FROM chunk WHERE variables <> '{}'::jsonb) AS names`.execute(db);
  const row = rows[0];
  return { names: row?.names ?? [], last: row?.last == null ? null : Number(row.last) };
}

/**
 * Replaces the tags of the company's contacts with these E.164 numbers: `tags[i]` (stored distinct and
 * sorted by code point) for `phones[i]`. Numbers that name no contact are skipped.
 */
export async function replaceContactTags(db: Db, companyId: number, phones: string[], tags: string[][]): Promise<void> {
  const docs = tags.map((t) => JSON.stringify(t));
  await sql`
    UPDATE contacts c SET tags = ARRAY(SELECT DISTINCT x COLLATE "C" FROM jsonb_array_elements_text(t.tags) AS x ORDER BY 1), updated_at = now()
    FROM unnest(${phones}::text[], ${docs}::jsonb[]) AS t(phone, tags)
    WHERE c.company_id = ${companyId} AND c.phone = t.phone`.execute(db);
}

/**
 * Adds `add` to and removes `remove` from the tags of the company's live contacts with these E.164
 * numbers (starting from `set` instead of each contact's own tags when `set` is given: the set is
 * replaced), except where the result would hold more than `max` tags. `matched`: contacts found;
 * `over`: of them, those whose result would exceed `max` (left unchanged).
 */
export async function changeContactTags(
  db: Db, companyId: number, phones: string[], add: string[], remove: string[], max: number, set: string[] | null = null,
): Promise<{ matched: number; over: number }> {
  const base = set === null ? sql`c.tags` : sql`${set}::text[]`;
  const { rows } = await sql<{ matched: number; over: number }>`
    WITH hit AS (
      SELECT c.contact_id, c.tags AS before,
             ARRAY(SELECT DISTINCT x COLLATE "C" FROM unnest(${base} || ${add}::text[]) AS x WHERE x <> ALL(${remove}::text[]) ORDER BY 1) AS after
      FROM contacts c WHERE c.company_id = ${companyId} AND c.erased_at IS NULL AND c.phone = ANY(${phones}::text[])),
    upd AS (
      UPDATE contacts c SET tags = hit.after, updated_at = now() FROM hit
      WHERE c.contact_id = hit.contact_id AND hit.after <> hit.before AND cardinality(hit.after) <= ${max}
      RETURNING 1)
    SELECT (SELECT count(*) FROM hit)::int AS matched,
           (SELECT count(*) FROM hit WHERE cardinality(hit.after) > ${max})::int AS over,
           (SELECT count(*) FROM upd)::int AS changed`.execute(db);
  return rows[0];
}

/** At most `limit` of the company's live contacts whose country is not computed yet (migration 026). */
export async function selectCountryless(db: Db, companyId: number, limit: number): Promise<{ contact_id: number; phone: string }[]> {
  const { rows } = await sql<{ contact_id: number; phone: string }>`
    SELECT contact_id, phone FROM contacts WHERE company_id = ${companyId} AND country IS NULL AND erased_at IS NULL
    ORDER BY contact_id LIMIT ${limit}`.execute(db);
  return rows.map((r) => ({ ...r, contact_id: Number(r.contact_id) }));
}

/** Stores computed countries (`countries[i]` for `ids[i]`; '' for none) where none is stored yet. */
export async function fillContactCountries(db: Db, ids: number[], countries: string[]): Promise<void> {
  await sql`
    UPDATE contacts c SET country = t.country FROM unnest(${ids}::int8[], ${countries}::text[]) AS t(id, country)
    WHERE c.contact_id = t.id AND c.country IS NULL`.execute(db);
}

/**
 * The company's contacts with these E.164 `phones` (those that exist; erased ones have another
 * phone), as the fan-out needs them: id, names, variables, opt-out.
 */
export async function contactsByPhone(db: Db, companyId: number, phones: string[]): Promise<{
  contact_id: number; phone: string; first_name: string | null; last_name: string | null; variables: Record<string, unknown>; opted_out: boolean;
}[]> {
  if (phones.length === 0) return [];
  const { rows } = await sql<{ contact_id: number; phone: string; first_name: string | null; last_name: string | null; variables: Record<string, unknown>; opted_out: boolean }>`
    SELECT contact_id, phone, first_name, last_name, variables, opted_out FROM contacts
    WHERE company_id = ${companyId} AND phone = ANY(${phones}::text[])`.execute(db);
  return rows;
}

/** A contact as an upsert left it (`created`: inserted by this statement). */
export interface StoredContactRow {
  contact_id: number;
  phone: string;
  first_name: string | null;
  last_name: string | null;
  variables: Record<string, unknown>;
  opted_out: boolean;
  created: boolean;
}

/**
 * The columns of an upsert, one entry per distinct E.164 number (index i of each array is one
 * contact): the number, its SHA-256 digests (hex, with and without `+`), names, variables (JSON text),
 * the opt-out state given (null: none), its evidence (JSON text or null) and its country.
 */
export interface ContactUpsertColumns {
  phones: string[]; plus: string[]; bare: string[]; first: (string | null)[]; last: (string | null)[];
  vars: string[]; opted: (boolean | null)[]; proofs: (string | null)[]; countries: string[];
}

/**
 * Inserts missing contacts and updates the names, variables (merged) and country of existing ones, in
 * one statement; every written contact as stored afterwards. A new contact whose number belonged to an
 * erased contact starts in the state of the number's latest ledger entry (src/domain/contacts.ts
 * `upsertContacts` says when); otherwise an opt-out given records `source` and now.
 */
export async function upsertContactRows(db: Db, companyId: number, c: ContactUpsertColumns, source: string): Promise<StoredContactRow[]> {
  // `s`: the latest ledger entry of an erased contact with the same number (the partial index
  // consent_ledger_erased holds only those, so a number never erased costs one probe of a tiny index,
  // and a company without erasures none: the uncorrelated EXISTS runs once, as a one-time filter).
  const { rows } = await sql<StoredContactRow>`
    INSERT INTO contacts AS c (company_id, phone, sha256_plus, sha256_bare, first_name, last_name, variables, opted_out, opt_out_source, opt_out_at, opt_out_evidence, country)
    SELECT ${companyId}, t.phone, decode(t.plus, 'hex'), decode(t.bare, 'hex'), t.first_name, t.last_name, t.variables,
      coalesce(s.opted_out, false) OR coalesce(t.opted_out, false),
      CASE WHEN s.opted_out THEN s.source WHEN t.opted_out THEN ${source}::text END,
      CASE WHEN s.opted_out THEN s.at WHEN t.opted_out THEN now() END,
      CASE WHEN s.opted_out THEN s.evidence WHEN t.opted_out THEN t.evidence END, t.country
    FROM unnest(${c.phones}::text[], ${c.plus}::text[], ${c.bare}::text[], ${c.first}::text[], ${c.last}::text[], ${c.vars}::jsonb[], ${c.opted}::bool[], ${c.proofs}::jsonb[], ${c.countries}::text[])
      AS t(phone, plus, bare, first_name, last_name, variables, opted_out, evidence, country)
    LEFT JOIN LATERAL (
      SELECT l.opted_out, l.source, l.at, l.evidence FROM consent_ledger l
      WHERE EXISTS (SELECT 1 FROM consent_ledger e WHERE e.company_id = ${companyId} AND e.erased)
        AND l.company_id = ${companyId} AND l.phone_sha256 = decode(t.plus, 'hex') AND l.erased
      ORDER BY l.entry_id DESC LIMIT 1) s ON true
    ON CONFLICT (company_id, phone) DO UPDATE SET
      first_name = coalesce(EXCLUDED.first_name, c.first_name),
      last_name  = coalesce(EXCLUDED.last_name, c.last_name),
      variables  = c.variables || EXCLUDED.variables,
      country    = coalesce(c.country, EXCLUDED.country),
      updated_at = now()
    RETURNING contact_id, phone, first_name, last_name, variables, opted_out, (xmax = 0) AS created`.execute(db);
  return rows;
}

/**
 * Sets the opt-out state `opted[i]` (evidence `proofs[i]`, JSON text or null) of the company's contact
 * with number `phones[i]` where it differs, with `opt_out_source` = `source` and `opt_out_at` = now;
 * the contacts changed with their new state.
 */
export async function updateOptOutStates(
  db: Db, companyId: number, phones: string[], opted: boolean[], proofs: (string | null)[], source: string,
): Promise<{ contact_id: number; opted_out: boolean }[]> {
  const { rows } = await sql<{ contact_id: number; opted_out: boolean }>`
    UPDATE contacts c SET opted_out = t.opted_out, opt_out_source = ${source}::text, opt_out_at = now(), opt_out_evidence = t.evidence
    FROM unnest(${phones}::text[], ${opted}::bool[], ${proofs}::jsonb[]) AS t(phone, opted_out, evidence)
    WHERE c.company_id = ${companyId} AND c.phone = t.phone AND c.opted_out <> t.opted_out
    RETURNING c.contact_id, c.opted_out`.execute(db);
  return rows;
}

/**
 * The columns an edit by hand may set: names, variables (JSON text), and an opt-out state with its
 * source, time and evidence (JSON text).
 */
export interface ContactFieldsSet {
  first_name?: string | null; last_name?: string | null; variables?: string;
  opted_out?: boolean; opt_out_source?: string; opt_out_at?: Date; opt_out_evidence?: string;
}

/** Writes `set` (and `updated_at` = `now`) into the company's contact `contactId`. */
export async function updateContactFields(db: Db, companyId: number, contactId: number, set: ContactFieldsSet, now: Date): Promise<void> {
  await db.updateTable('contacts').set({ ...set, updated_at: now })
    .where('company_id', '=', companyId).where('contact_id', '=', contactId).execute();
}

/** Locks the row of contact `contactId` until the transaction ends (two erasures, or an erasure and an edit, run one after the other). */
export async function lockContactRow(db: Db, contactId: number): Promise<void> {
  await sql`SELECT 1 FROM contacts WHERE contact_id = ${contactId} FOR UPDATE`.execute(db);
}
