/**
 * The consent ledger (docs/audience.md "The consent ledger"): every change of a contact's opt-out
 * state, `{at, opted_out, source, category, evidence}`, kept under the SHA-256 of the number (never the
 * number), so that it outlives the contact's erasure and keeps a number that opted out suppressed
 * when it comes back (src/domain/contacts.ts `upsertContacts`, src/domain/erasure.ts).
 *
 * Entries are written by the contacts triggers (migration 029) from the state every writer sets:
 * - `keyword`: an inbound opt-out or opt-in keyword; evidence `{inbound_message_id, text}`
 *   (src/domain/inbound.ts);
 * - `whatsapp`: WhatsApp refused a message because the person stopped marketing messages (131050);
 *   evidence `{error_code, message_id, provider_message_id}`;
 * - `operator`: the operator API (PATCH a contact, PUT contacts); evidence `{actor, operation, note?}`
 *   (`note`: the request's `consent_evidence`);
 * - `console`: a console user's button; evidence `{user, wording}` (the user's email, the button's text);
 * - `import`: a CSV import; evidence `{import_id, line, actor}`;
 * - `api`: reserved for the public API, which has no operation that changes consent.
 * `category` is `marketing`, the only one campaigns respect.
 */
import type { Db } from '../db/database.ts';
import { selectConsentEntries } from '../db/consent.ts';
import { findContact } from '../db/contacts.ts';
import { DomainError } from './errors.ts';
import { phoneDigests, toE164 } from './phone.ts';

/** Where a change of consent came from (see the module comment). */
export const CONSENT_SOURCES = ['keyword', 'whatsapp', 'operator', 'console', 'import', 'api'] as const;
export type ConsentSource = typeof CONSENT_SOURCES[number];

/** Most entries one answer lists (a number changes its mind far fewer times). */
export const CONSENT_ENTRIES_MAX = 10_000;

/** The order evidence fields are given in (who, what, then the proof; others after them, as stored). */
const EVIDENCE_ORDER = ['user', 'actor', 'operation', 'wording', 'note', 'import_id', 'line', 'inbound_message_id', 'text', 'error_code', 'message_id', 'provider_message_id'];
const rank = (k: string) => (EVIDENCE_ORDER.includes(k) ? EVIDENCE_ORDER.indexOf(k) : EVIDENCE_ORDER.length);

/** Evidence with its fields in EVIDENCE_ORDER (the database keeps a JSON object's keys in its own order). */
export function orderedEvidence(e: Record<string, unknown> | null): Record<string, unknown> | null {
  return e === null ? null : Object.fromEntries(Object.entries(e).sort(([a], [b]) => rank(a) - rank(b)));
}

/** One change of a number's opt-out state. */
export interface ConsentEntry { at: Date; opted_out: boolean; source: string; category: string; evidence: Record<string, unknown> | null }

/**
 * The ledger of the company's number `key` (any form its default country parses), oldest first (in
 * the order recorded), at most CONSENT_ENTRIES_MAX: the entries of its live contact and of every
 * erased contact that had the number; evidence fields in a fixed order ({@link orderedEvidence}). 404 `Contact not found` when `key` is no valid number, or the
 * company has neither a contact with the number nor entries for it.
 */
export async function consentHistory(db: Db, companyId: number, defaultCountry: string, key: string): Promise<ConsentEntry[]> {
  const e164 = toE164(key.trim(), defaultCountry);
  if (!e164) throw new DomainError(404, 'Contact not found');
  const entries = await selectConsentEntries(db, companyId, phoneDigests(e164).plus, CONSENT_ENTRIES_MAX);
  if (entries.length === 0 && !(await findContact(db, companyId, { phone: e164 }))) throw new DomainError(404, 'Contact not found');
  return entries.map((e) => ({ ...e, evidence: orderedEvidence(e.evidence) }));
}
