/**
 * Contacts (docs/decisions.md#5-phone-numbers-and-digests, #6-contacts-personalisation-sending): a contact is the pair (company, E.164 number). Bulk upsert serves the
 * operator import (PUT /admin/companies/{id}/contacts), the CSV import job and the send pipeline (4.3
 * creates contacts, replaces given names and merges variables; 4.4 creates contacts by phone only).
 * The console and the operator API: the contact's page (fields, variables, segments, opt-out state and history, messages,
 * inbound), the list and search rules, and the edit of names, variables and opt-out by hand (source
 * `console` or `operator`, audit-logged). Erasure is in erasure.ts, the export in contacts-export.ts.
 *
 * Commands (each takes the `Actor` that runs it and records its own audit entry; the SQL is in
 * src/db/contacts.ts): `importContacts` (operator API's JSON import), `changeTags` (tags of many
 * contacts: operator API), `tagContact` (one contact's tags: console), `updateContact` (an edit by
 * hand: operator API and console).
 */
import type { Db } from '../db/database.ts';
import {
  changeContactTags, fillContactCountries, findContact, replaceContactTags, selectCountryless, listContactHistory, listContactSegments, listInbound, listSentTo,
  updateContactFields, updateOptOutStates, upsertContactRows,
  type ContactFieldsSet, type ContactFilter, type ContactHistoryEntry, type ContactRow, type ContactSegment, type InboundView, type SentView, type StoredContactRow,
} from '../db/contacts.ts';
import { actorName, audit, type Actor } from './actor.ts';
import { contactFieldProblems, type ContactFieldProblem } from './contact-rules.ts';
import { DomainError } from './errors.ts';
import { countryOf, phoneDigests, toE164 } from './phone.ts';

/** One contact to write. Absent (undefined/null) fields keep what is stored; variables are merged. */
export interface ContactWrite {
  phone: string; // E.164
  first_name?: string | null;
  last_name?: string | null;
  variables?: Record<string, unknown> | null;
  opted_out?: boolean | null;
  /** Replaces the contact's tags when given (distinct, sorted when stored); absent/null keeps them. */
  tags?: string[] | null;
  /** What proves an opt-out state this write sets (the consent ledger's evidence); absent: the call's. */
  evidence?: Record<string, unknown> | null;
}

/** A contact as an upsert left it (`created`: inserted by this upsert). */
export type StoredContact = StoredContactRow;

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
    if (w.tags != null) prev.tags = w.tags;
    if (w.evidence != null) prev.evidence = w.evidence;
    if (w.variables) prev.variables = Object.assign(Object.create(null), prev.variables ?? {}, w.variables);
  }
  return [...byPhone.values()];
}

/**
 * Inserts missing contacts and updates existing ones (one statement, a second only when opt-outs are
 * given); returns every written contact as stored afterwards. Phones must already be E.164; duplicates
 * are merged first. Run it inside a transaction when both statements must commit together.
 * An opt-out state that is set or changed records `opt_out_source` (`source`, default 'operator'),
 * `opt_out_at` = now (docs/decisions.md#9-whatsapp-webhooks-in) and `opt_out_evidence` (the write's
 * `evidence`, else `evidence`); an unchanged one keeps all three. The contacts trigger (migration 029)
 * copies each change into the consent ledger (docs/audience.md "The consent ledger").
 *
 * Suppression (docs/audience.md "Suppression after erasure"): a contact created for a number whose
 * earlier contact was erased starts in the state of the number's latest ledger entry, with its
 * source, time and evidence; a write's `opted_out: false` does not undo an opt-out there (opting such
 * a number back in is a change made once it exists), `opted_out: true` opts it out as usual.
 */
export async function upsertContacts(
  db: Db, companyId: number, writes: ContactWrite[], source = 'operator', evidence: Record<string, unknown> | null = null,
): Promise<StoredContact[]> {
  const rows = mergeWrites(writes);
  if (rows.length === 0) return [];
  const phones: string[] = [];
  const plus: string[] = [];
  const bare: string[] = [];
  const first: (string | null)[] = [];
  const last: (string | null)[] = [];
  const vars: string[] = [];
  const opted: (boolean | null)[] = [];
  const proofs: (string | null)[] = [];
  const countries: string[] = [];
  const fallback = evidence === null ? null : JSON.stringify(evidence);
  for (const r of rows) {
    const d = phoneDigests(r.phone);
    phones.push(r.phone);
    plus.push(d.plus.toString('hex'));
    bare.push(d.bare.toString('hex'));
    first.push(r.first_name ?? null);
    last.push(r.last_name ?? null);
    vars.push(JSON.stringify(r.variables ?? {}));
    opted.push(r.opted_out ?? null);
    proofs.push(r.evidence ? JSON.stringify(r.evidence) : fallback);
    countries.push(countryOf(r.phone));
  }
  const given = opted.some((o) => o !== null);
  const out = await upsertContactRows(db, companyId, { phones, plus, bare, first, last, vars, opted, proofs, countries }, source);
  // An existing contact's opt-out changes only where the write gives one (the insert above cannot tell
  // "not given" from false, the column being NOT NULL); contacts created just now already have theirs.
  if (given) {
    const existing = new Set(out.filter((c) => !c.created).map((c) => c.phone));
    const idx = phones.flatMap((p, i) => (existing.has(p) && opted[i] !== null ? [i] : []));
    if (idx.length) {
      const changed = await updateOptOutStates(db, companyId, idx.map((i) => phones[i]), idx.map((i) => opted[i]!), idx.map((i) => proofs[i]), source);
      const byId = new Map(changed.map((r) => [r.contact_id, r.opted_out]));
      for (const c of out) if (byId.has(c.contact_id)) c.opted_out = byId.get(c.contact_id)!;
    }
  }
  const tagged = rows.filter((r) => r.tags != null);
  if (tagged.length) await replaceContactTags(db, companyId, tagged.map((r) => r.phone), tagged.map((r) => r.tags!));
  return out;
}

export interface ImportRow {
  phone: string;
  first_name?: string | null;
  last_name?: string | null;
  variables?: Record<string, unknown> | null;
  opted_out?: boolean | null;
  tags?: string[] | null;
  /** A note proving the opt-out state given (a form's wording, a ticket): kept in the consent ledger's evidence. */
  consent_evidence?: string | null;
}

/** Most items an {@link ImportRulesError} names (the first ones, in order). */
export const IMPORT_PROBLEMS_SHOWN = 100;

/** An operator import refused, nothing written: its items that break contact-rules.ts (`index` in the request). */
export class ImportRulesError extends DomainError {
  readonly problems: (ContactFieldProblem & { index: number })[];
  constructor(problems: (ContactFieldProblem & { index: number })[]) {
    super(422, 'contacts break the rules of names and variables');
    this.problems = problems;
  }
}

/** The company data the commands on contacts need. */
export interface ContactsCompany { company_id: number; default_country: string }

/**
 * Command: the operator's JSON import of contacts (PUT /admin/companies/{id}/contacts). Normalises
 * phones (the company's default country), upserts in one transaction, counts the outcome and records
 * the audit entry `contacts.import` on `company:<id>` with the counts. Opt-out changes are recorded
 * with source `operator` and evidence `{actor, operation: "import_contacts", note?}` (`actor`: the
 * actor's audit name; `note`: the row's `consent_evidence`).
 * Errors: {@link ImportRulesError} (422, the first IMPORT_PROBLEMS_SHOWN problems), nothing written,
 * when an item breaks contact-rules.ts.
 */
export async function importContacts(
  db: Db, actor: Actor, company: ContactsCompany, items: ImportRow[],
): Promise<{ created: number; updated: number; invalid: number }> {
  const problems: (ContactFieldProblem & { index: number })[] = [];
  for (let i = 0; i < items.length && problems.length < IMPORT_PROBLEMS_SHOWN; i++) {
    for (const p of contactFieldProblems(items[i])) problems.push({ ...p, index: i });
  }
  if (problems.length) throw new ImportRulesError(problems.slice(0, IMPORT_PROBLEMS_SHOWN));
  const writes: ContactWrite[] = [];
  let invalid = 0;
  const who = actorName(actor);
  for (const { consent_evidence: note, ...item } of items) {
    const e164 = toE164(item.phone, company.default_country);
    if (!e164) {
      invalid++;
      continue;
    }
    writes.push({ ...item, phone: e164, evidence: { actor: who, operation: 'import_contacts', ...(note ? { note } : {}) } });
  }
  return db.transaction().execute(async (trx) => {
    const stored = await upsertContacts(trx, company.company_id, writes);
    const created = stored.filter((c) => c.created).length;
    const result = { created, updated: stored.length - created, invalid };
    await audit(trx, actor, { action: 'contacts.import', target: `company:${company.company_id}`, companyId: company.company_id, details: result });
    return result;
  });
}

/** Longest tag (characters) and most tags per contact. */
export const TAG_MAX_LENGTH = 64;
export const TAGS_MAX = 100;
/** Most numbers one change of tags takes. */
export const TAG_CHANGE_MAX = 100_000;

/**
 * Adds `add` to and removes `remove` from the tags of the company's contacts with these E.164 numbers
 * (starting from `set` when given), inside the caller's transaction; the contacts found. 422 when a
 * contact would hold more than TAGS_MAX tags (nothing changes).
 */
async function applyTagChange(db: Db, companyId: number, phones: string[], add: string[], remove: string[], set: string[] | null): Promise<number> {
  const r = await changeContactTags(db, companyId, phones, add, remove, TAGS_MAX, set);
  if (r.over > 0) throw new DomainError(422, `${r.over} contact(s) would have more than ${TAGS_MAX} tags: nothing changed`);
  return r.matched;
}

/** A change of the tags of many contacts: numbers in any form, the tags to set (optional), add and remove. */
export interface TagsChange { contacts: string[]; set?: string[]; add?: string[]; remove?: string[] }

/**
 * Command: adds `add` to and removes `remove` from the tags of the company's contacts named by
 * `contacts` (any form the default country parses), in one transaction; with `set`, each contact's
 * tags are first replaced by `set` (then `add` and `remove` apply). A tag both added and removed is
 * removed. `matched`: contacts found; `not_found`: distinct items that name no contact (invalid
 * numbers included). Audit: `contacts.tags` on `company:<id>` with the counts, `set` (when given),
 * `add` and `remove`. 422 DomainError when a contact would hold more than TAGS_MAX tags (nothing
 * changes, nothing recorded).
 */
export async function changeTags(db: Db, actor: Actor, company: ContactsCompany, change: TagsChange): Promise<{ matched: number; not_found: number }> {
  const add = change.add ?? [];
  const remove = change.remove ?? [];
  const keys = new Set<string>();
  for (const p of change.contacts) keys.add(toE164(p, company.default_country) ?? `invalid:${p}`);
  const valid = [...keys].filter((k) => !k.startsWith('invalid:'));
  return db.transaction().execute(async (trx) => {
    const matched = valid.length === 0 ? 0 : await applyTagChange(trx, company.company_id, valid, add, remove, change.set ?? null);
    const result = { matched, not_found: keys.size - matched };
    await audit(trx, actor, {
      action: 'contacts.tags', target: `company:${company.company_id}`, companyId: company.company_id,
      details: { ...result, ...(change.set ? { set: change.set } : {}), add, remove },
    });
    return result;
  });
}

/**
 * Command: adds the tags of `add` the contact lacks and removes those of `remove` it has (the
 * console's contact page), in one transaction, audit-logged as `contact.update` on `contact:<id>` with
 * `{changed: ["tags"], tags_added, tags_removed}`. Nothing is written nor recorded when neither list
 * changes anything. The tags added and removed. 422 DomainError when the contact would hold more than
 * TAGS_MAX tags.
 */
export async function tagContact(
  db: Db, actor: Actor, companyId: number, contact: { contact_id: number; phone: string; tags: string[] }, add: string[], remove: string[],
): Promise<{ added: string[]; removed: string[] }> {
  const added = add.filter((t) => !contact.tags.includes(t));
  const removed = remove.filter((t) => contact.tags.includes(t));
  if (added.length === 0 && removed.length === 0) return { added, removed };
  await db.transaction().execute(async (trx) => {
    await applyTagChange(trx, companyId, [contact.phone], added, removed, null);
    await audit(trx, actor, {
      action: 'contact.update', target: `contact:${contact.contact_id}`, companyId, details: { changed: ['tags'], tags_added: added, tags_removed: removed },
    });
  });
  return { added, removed };
}

/** Contacts whose country one call of fillCountries computes at most. */
export const COUNTRY_FILL_CHUNK = 5_000;

/**
 * Computes the country of the company's contacts written before migration 026 (their `country` is
 * null), at most `max` of them, COUNTRY_FILL_CHUNK per statement; the number computed. Contacts
 * written since get theirs at upsert. Filters on `country` call it first (src/domain/segment-filter.ts).
 */
export async function fillCountries(db: Db, companyId: number, max = 50_000): Promise<number> {
  let done = 0;
  while (done < max) {
    const rows = await selectCountryless(db, companyId, Math.min(COUNTRY_FILL_CHUNK, max - done));
    if (rows.length === 0) break;
    await fillContactCountries(db, rows.map((r) => r.contact_id), rows.map((r) => countryOf(r.phone)));
    done += rows.length;
  }
  return done;
}

/** Inbound and sent messages shown per contact (newest first). */
export const CONTACT_VIEW_LIMIT = 100;

/**
 * One contact as the operator API and console show it: its segments,
 * its history (audit entries naming it, newest first, at most CONTACT_VIEW_LIMIT), inbound and sent.
 */
export interface ContactView extends ContactRow {
  /** When the contact's customer-service window closes: 24 h after its last inbound message, or null. */
  window_open_until: Date | null;
  segments: ContactSegment[];
  history: ContactHistoryEntry[];
  inbound: InboundView[];
  messages: SentView[];
}

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
  const [segments, history, inbound, messages] = await Promise.all([
    listContactSegments(db, companyId, contact.contact_id),
    listContactHistory(db, companyId, contact.contact_id, CONTACT_VIEW_LIMIT),
    listInbound(db, companyId, contact.contact_id, CONTACT_VIEW_LIMIT),
    listSentTo(db, companyId, contact.phone, CONTACT_VIEW_LIMIT),
  ]);
  // A contact stored before migration 026 has no country yet (fillCountries stores it later): computed here.
  const country = contact.country ?? countryOf(contact.phone);
  return { ...contact, country, window_open_until: windowOpenUntil(contact.last_inbound_at), segments, history, inbound, messages };
}

/** WhatsApp's customer-service window: free-form messages may answer a contact this long after it wrote (ms). */
export const CUSTOMER_SERVICE_WINDOW_MS = 24 * 3600 * 1000;

/** The end of a contact's customer-service window (a time in the past: closed), or null when it never wrote. */
export function windowOpenUntil(lastInboundAt: Date | string | null): Date | null {
  return lastInboundAt === null ? null : new Date(new Date(lastInboundAt).getTime() + CUSTOMER_SERVICE_WINDOW_MS);
}

/** The company's contact named by `key` (as getContactView), without its lists; 404 when unknown. */
export async function resolveContact(db: Db, companyId: number, defaultCountry: string, key: string, allowId = false): Promise<ContactRow> {
  const e164 = toE164(key.trim(), defaultCountry);
  const id = !e164 && allowId && /^[0-9]{1,15}$/.test(key) ? Number(key) : undefined;
  if (id === undefined && !e164) throw new DomainError(404, 'Contact not found');
  const contact = await findContact(db, companyId, e164 ? { phone: e164 } : { contactId: id! });
  if (!contact) throw new DomainError(404, 'Contact not found');
  return contact;
}

/** Shortest search by number: at least this many digits. */
export const MIN_SEARCH_DIGITS = 4;

/**
 * How a search text is read (the same in console, operator API and CLI): empty → every contact;
 * letters → name words (each a case-insensitive prefix of the first or last name, at most 5 words);
 * otherwise its digits, which must be at least MIN_SEARCH_DIGITS (400 otherwise). A full number that
 * names a contact is looked up by the caller first.
 */
export function parseContactQuery(q: string): ContactFilter {
  const text = q.trim();
  if (text === '') return { all: true };
  if (/\p{L}/u.test(text)) {
    const words = text.split(/\s+/).filter(Boolean).slice(0, 5);
    return { words };
  }
  const digits = text.replace(/\D/g, '');
  if (digits.length < MIN_SEARCH_DIGITS) throw new DomainError(400, `Search by number needs at least ${MIN_SEARCH_DIGITS} digits`);
  return { digits };
}

// The rules of names and variables live in contact-rules.ts (shared with the JSON and CSV imports and the CLI).
export { VARIABLE_NAME, VARIABLE_VALUE_MAX, VARIABLES_MAX } from './contact-rules.ts';

/** An edit by hand: absent fields keep what is stored; `variables` replaces the whole set. */
export interface ContactEdit {
  first_name?: string | null;
  last_name?: string | null;
  variables?: Record<string, unknown>;
  opted_out?: boolean;
  /** A note proving an opt-out change (a form's wording, a ticket): kept in the consent ledger's evidence. */
  consent_evidence?: string | null;
}

/** Field → message of an edit that breaks the rules of contact-rules.ts (empty when it is fine). */
export function checkContactEdit(edit: ContactEdit): Record<string, string> {
  return Object.fromEntries(contactFieldProblems(edit).map((p) => [p.field, p.message]));
}

/** The consent ledger's source of an opt-out state set by hand: `console` for a console user, else `operator`. */
export function editSource(actor: Actor): 'console' | 'operator' {
  return actor.kind === 'console' ? 'console' : 'operator';
}

/**
 * Command: applies an edit by hand to a contact of the company in one transaction, and audit-logs it
 * as `contact.update` on `contact:<id>` with the names of the changed fields and the new opt-out state
 * (never the values of names or variables; nothing is recorded when nothing changed). An opt-out
 * change records `opt_out_source` = {@link editSource}, `opt_out_at` = `opts.now` and
 * `opt_out_evidence` = `opts.evidence` (default `{actor}`, the actor's audit name; with `note`: the
 * edit's `consent_evidence`), which the contacts trigger copies into the consent ledger
 * (docs/audience.md). Returns the names of the fields that changed.
 * Errors: 422 DomainError when the edit breaks checkContactEdit; 404 when the contact is unknown.
 */
export async function updateContact(
  db: Db, actor: Actor, companyId: number, contactId: number, edit: ContactEdit,
  opts: { now: Date; evidence?: Record<string, unknown> },
): Promise<string[]> {
  const errors = checkContactEdit(edit);
  const first = Object.keys(errors)[0];
  if (first) throw new DomainError(422, `${first}: ${errors[first]}`);
  return db.transaction().execute(async (trx) => {
    const before = await findContact(trx, companyId, { contactId });
    if (!before) throw new DomainError(404, 'Contact not found');
    const changed: string[] = [];
    const set: ContactFieldsSet = {};
    if (edit.first_name !== undefined && (edit.first_name || null) !== before.first_name) { set.first_name = edit.first_name || null; changed.push('first_name'); }
    if (edit.last_name !== undefined && (edit.last_name || null) !== before.last_name) { set.last_name = edit.last_name || null; changed.push('last_name'); }
    if (edit.variables !== undefined && JSON.stringify(sortKeys(edit.variables)) !== JSON.stringify(sortKeys(before.variables))) {
      set.variables = JSON.stringify(edit.variables);
      changed.push('variables');
    }
    if (edit.opted_out !== undefined && edit.opted_out !== before.opted_out) {
      const evidence = { ...(opts.evidence ?? { actor: actorName(actor) }), ...(edit.consent_evidence ? { note: edit.consent_evidence } : {}) };
      Object.assign(set, { opted_out: edit.opted_out, opt_out_source: editSource(actor), opt_out_at: opts.now, opt_out_evidence: JSON.stringify(evidence) });
      changed.push('opted_out');
    }
    if (changed.length === 0) return changed;
    await updateContactFields(trx, companyId, contactId, set, opts.now);
    const details: Record<string, unknown> = { changed };
    if (changed.includes('opted_out')) details.opted_out = edit.opted_out;
    if (changed.includes('variables')) details.variable_names = Object.keys(edit.variables!).sort();
    await audit(trx, actor, { action: 'contact.update', target: `contact:${contactId}`, companyId, details });
    return changed;
  });
}

function sortKeys(o: Record<string, unknown>): [string, unknown][] {
  return Object.entries(o).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}
