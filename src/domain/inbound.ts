/**
 * Inbound messages and keyword opt-outs (docs/decisions.md#9-whatsapp-webhooks-in): what contacts send to a company's
 * WhatsApp number is stored per contact (the contact is created when unknown, its number normalised to
 * E.164 with the company's default country), once per provider id; a text or button payload that,
 * trimmed and case-folded, equals one of the company's `opt_out_keywords` opts the contact out of
 * campaigns (`opt_out_source = 'keyword'`, `opt_out_at` = the message's time, evidence the message's
 * provider id and the keyword as sent, copied into the consent ledger), one of `opt_in_keywords`
 * back in. Only messages stored for the first time count, so a webhook delivered twice acts once.
 * Each sender's `last_inbound_at` becomes its latest inbound time (its customer-service window), and
 * its WhatsApp profile name fills an empty `first_name` (a name already there is never replaced).
 * Stored with each message: what it answers (`context.id`, or the message a reaction is about), a
 * reaction's emoji, a media's id and MIME type, a location's coordinates (docs/whatsapp.md).
 */
import type { Db } from '../db/database.ts';
import { applyOptChanges, insertInbound, touchInboundSenders, type InboundRow, type InboundSender, type OptChange } from '../db/receipts.ts';
import { upsertContacts } from './contacts.ts';
import { toE164 } from './phone.ts';
import type { InboundItem } from './receipts.ts';

/** The company fields inbound handling needs. */
export interface InboundCompany {
  company_id: number;
  default_country: string;
  opt_out_keywords: string[];
  opt_in_keywords: string[];
}

/** What storing a payload's messages did. */
export interface InboundResult { stored: number; duplicates: number; invalid: number; optChanges: number }

/** Trimmed and case-folded (Unicode lower case after NFKC), as keywords are compared. */
export function foldKeyword(text: string): string {
  return text.normalize('NFKC').trim().toLocaleLowerCase('und');
}

/** `true` (opt out), `false` (opt in) or null when the message is not a keyword of the company. */
export function keywordOf(company: InboundCompany, item: Pick<InboundItem, 'text' | 'payload' | 'type'>): boolean | null {
  return keywordMatch(company, item)?.optOut ?? null;
}

/** The keyword a message is (`optOut`, and the text or payload that matched as sent), or null. */
export function keywordMatch(company: InboundCompany, item: Pick<InboundItem, 'text' | 'payload' | 'type'>): { optOut: boolean; matched: string } | null {
  const candidates = [item.type === 'text' ? item.text : null, item.payload].filter((t): t is string => typeof t === 'string');
  for (const c of candidates) {
    const f = foldKeyword(c);
    if (company.opt_out_keywords.some((k) => foldKeyword(k) === f)) return { optOut: true, matched: c };
    if (company.opt_in_keywords.some((k) => foldKeyword(k) === f)) return { optOut: false, matched: c };
  }
  return null;
}

/**
 * Stores inbound messages of one company and applies their keywords; run it in a transaction (the
 * contacts, the messages and the opt-out changes commit together, so a retried job acts once).
 */
export async function storeInbound(trx: Db, company: InboundCompany, items: InboundItem[]): Promise<InboundResult> {
  const phones = new Map<string, string>();
  let invalid = 0;
  for (const it of items) {
    const e164 = toE164('+' + it.from, company.default_country);
    if (e164) phones.set(it.from, e164);
  }
  const contacts = await upsertContacts(trx, company.company_id, [...new Set(phones.values())].map((phone) => ({ phone })));
  const contactOf = new Map(contacts.map((c) => [c.phone, Number(c.contact_id)]));
  const rows: InboundRow[] = [];
  const senders: InboundSender[] = [];
  const seen = new Set<string>();
  for (const it of items) {
    const phone = phones.get(it.from);
    const contactId = phone ? contactOf.get(phone) : undefined;
    if (contactId === undefined) {
      invalid++;
      continue;
    }
    if (seen.has(it.id)) continue;
    seen.add(it.id);
    rows.push({
      contact_id: contactId, provider_message_id: it.id, type: it.type, text: it.text, payload: it.payload, received_at: it.at,
      reply_to_provider_message_id: it.reply_to ?? null, reaction: it.reaction ?? null, media: it.media ?? null, location: it.location ?? null,
    });
    senders.push({ contact_id: contactId, at: it.at, name: it.name ?? null });
  }
  const stored = new Set(await insertInbound(trx, company.company_id, rows));
  await touchInboundSenders(trx, company.company_id, senders);
  // The newest keyword of each contact among the messages stored now decides its state.
  const latest = new Map<number, OptChange>();
  for (const r of rows) {
    if (!stored.has(r.provider_message_id)) continue;
    const match = keywordMatch(company, r);
    if (match === null) continue;
    const prev = latest.get(r.contact_id);
    // The ledger's evidence: the inbound message's provider id and the keyword as sent (docs/audience.md).
    const evidence = { inbound_message_id: r.provider_message_id, text: match.matched };
    if (!prev || prev.at <= r.received_at) latest.set(r.contact_id, { contact_id: r.contact_id, opted_out: match.optOut, at: r.received_at, evidence });
  }
  const changed = await applyOptChanges(trx, company.company_id, [...latest.values()]);
  return { stored: stored.size, duplicates: rows.length - stored.size, invalid, optChanges: changed.length };
}
