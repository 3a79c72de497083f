/**
 * The operator's WhatsApp rate card (docs/whatsapp.md "Pricing and the rate card"): Meta's price of one
 * delivered template message by the recipient's country (ISO 3166-1 alpha-2) and the template's
 * category (MARKETING, UTILITY, AUTHENTICATION), all rows in one currency (ISO 4217).
 *
 * - {@link checkRateCard} validates rows (JSON or read from CSV by {@link readRateCardCsv}) and throws
 *   {@link RateCardError} naming each bad row by its 0-based index and field;
 * - {@link setRateCard} is the domain command that replaces the card (one transaction) and records
 *   `whatsapp.rate_card.set` with the row count; {@link getRateCard} reads it;
 * - {@link priceCard} and {@link priceOf} price one message (pure): free, a price, or unknown.
 */
import { parse } from 'csv-parse/sync';
import { getCountries } from 'libphonenumber-js/max';
import { deleteRates, insertRates, selectRateCardHead, selectRates, upsertRateCard } from '../db/rate-card.ts';
import type { Db } from '../db/database.ts';
import { audit, type Actor } from './actor.ts';
import { countryOf } from './phone.ts';

/** The template categories Meta prices. */
export const RATE_CATEGORIES = ['MARKETING', 'UTILITY', 'AUTHENTICATION'] as const;
/** A priced template category. */
export type RateCategory = typeof RATE_CATEGORIES[number];
/** The columns of a rate card (JSON fields and CSV header). */
export const RATE_COLUMNS = ['country', 'category', 'price', 'currency'] as const;

/** One rate as loaded: `price` is a number ≥ 0 (JSON) or its decimal text (CSV). */
export interface RateInput {
  country: unknown;
  category: unknown;
  price: unknown;
  currency: unknown;
}

/** One rate of the card; `price` in `currency` per delivered message. */
export interface Rate {
  country: string;
  category: RateCategory;
  price: number;
  currency: string;
}

/** The card: its rows (by country, then category), its currency (null when empty), when last replaced (null: never). */
export interface RateCard {
  rows: Rate[];
  currency: string | null;
  updated_at: Date | null;
}

/** One problem: the row's 0-based index (undefined: the file or body as a whole), the field, and why. */
export interface RateCardProblem {
  index?: number;
  field?: string;
  message: string;
}

/** A refused card: every problem found (nothing was written). */
export class RateCardError extends Error {
  readonly problems: RateCardProblem[];
  constructor(problems: RateCardProblem[]) {
    super(problems.map((p) => (p.index === undefined ? p.message : `row ${p.index}${p.field ? ` ${p.field}` : ''}: ${p.message}`)).join('; '));
    this.problems = problems;
  }
}

const COUNTRIES = new Set<string>(getCountries());
const DECIMAL = /^(0|[1-9][0-9]{0,11})(\.[0-9]{1,10})?$/;

/** The decimal text of a price (number or text), or null when it is not a decimal ≥ 0 with at most 12 + 10 digits. */
function decimalText(price: unknown): string | null {
  if (typeof price === 'number') {
    if (!Number.isFinite(price) || price < 0) return null;
    const text = price.toFixed(10).replace(/\.?0+$/, '');
    return DECIMAL.test(text) && Number(text) === price ? text : null;
  }
  if (typeof price === 'string') return DECIMAL.test(price.trim()) ? price.trim() : null;
  return null;
}

/**
 * Validates and normalises a card's rows: country one of libphonenumber-js's countries, category one
 * of {@link RATE_CATEGORIES}, price a decimal ≥ 0 (at most 10 decimals), currency three upper-case
 * letters and the same on every row, no (country, category) twice. Throws {@link RateCardError}.
 */
export function checkRateCard(rows: RateInput[]): Rate[] {
  const problems: RateCardProblem[] = [];
  const seen = new Map<string, number>();
  const out: Rate[] = [];
  let currency: string | undefined;
  rows.forEach((row, index) => {
    const { country, category, price, currency: cur } = row;
    const before = problems.length;
    if (typeof country !== 'string' || !/^[A-Z]{2}$/.test(country)) problems.push({ index, field: 'country', message: 'must be an ISO 3166-1 alpha-2 code (two upper-case letters)' });
    else if (!COUNTRIES.has(country)) problems.push({ index, field: 'country', message: `${country} is not a country with a calling code` });
    if (typeof category !== 'string' || !(RATE_CATEGORIES as readonly string[]).includes(category)) problems.push({ index, field: 'category', message: 'must be one of MARKETING, UTILITY, AUTHENTICATION' });
    const text = decimalText(price);
    if (text === null) problems.push({ index, field: 'price', message: 'must be a decimal number ≥ 0 (at most 10 decimals)' });
    if (typeof cur !== 'string' || !/^[A-Z]{3}$/.test(cur)) problems.push({ index, field: 'currency', message: 'must be an ISO 4217 code (three upper-case letters)' });
    else if (currency === undefined) currency = cur;
    else if (cur !== currency) problems.push({ index, field: 'currency', message: `every row must be in one currency (${currency}, as the first row)` });
    if (problems.length > before) return;
    const key = `${country as string}/${category as string}`;
    const first = seen.get(key);
    if (first !== undefined) {
      problems.push({ index, field: 'category', message: `duplicate of row ${first} (${country as string}, ${category as string})` });
      return;
    }
    seen.set(key, index);
    out.push({ country: country as string, category: category as RateCategory, price: Number(text), currency: cur as string });
  });
  if (problems.length > 0) throw new RateCardError(problems);
  return out;
}

/**
 * Reads a rate card CSV: a header row naming `country`, `category`, `price`, `currency` (any order,
 * case-insensitive; other columns refused), delimiter `,` or `;`, empty lines skipped. Row index 0 is
 * the first row after the header. Throws {@link RateCardError} (index undefined) when the file
 * cannot be read; the rows themselves are checked by {@link checkRateCard}.
 */
export function readRateCardCsv(text: string): RateInput[] {
  const firstLine = text.replace(/^\uFEFF/, '').split(/\r?\n/, 1)[0] ?? '';
  const delimiter = firstLine.includes(';') && !firstLine.includes(',') ? ';' : ',';
  let records: string[][];
  try {
    records = parse(text, { bom: true, trim: true, delimiter, skip_empty_lines: true, relax_column_count: false }) as string[][];
  } catch (err) {
    throw new RateCardError([{ message: `the CSV cannot be read: ${(err as Error).message}` }]);
  }
  const [header, ...rows] = records;
  if (header === undefined) throw new RateCardError([{ message: 'the CSV is empty: it needs a header row (country,category,price,currency)' }]);
  const names = header.map((h) => h.toLowerCase());
  const missing = RATE_COLUMNS.filter((c) => !names.includes(c));
  const unknown = names.filter((n) => !(RATE_COLUMNS as readonly string[]).includes(n));
  if (missing.length > 0 || unknown.length > 0 || new Set(names).size !== names.length) {
    throw new RateCardError([{ message: `the CSV header must name the columns country, category, price, currency once each (it has: ${header.join(',')})` }]);
  }
  return rows.map((cells) => Object.fromEntries(names.map((n, i) => [n, cells[i]])) as unknown as RateInput);
}

/**
 * Replaces the rate card with `rows` (checked by {@link checkRateCard}; an empty list empties it) in
 * one transaction at `at` (ms), recording `whatsapp.rate_card.set` (target `whatsapp:rate_card`,
 * details `{rows, currency}`). Returns the stored card. Throws {@link RateCardError}.
 */
export async function setRateCard(db: Db, actor: Actor, rows: RateInput[], at: number): Promise<RateCard> {
  const rates = checkRateCard(rows);
  const currency = rates[0]?.currency ?? null;
  await db.transaction().execute(async (trx) => {
    await deleteRates(trx);
    await insertRates(trx, rates.map((r) => ({ country: r.country, category: r.category, price: String(r.price) })));
    await upsertRateCard(trx, currency, at);
    await audit(trx, actor, { action: 'whatsapp.rate_card.set', target: 'whatsapp:rate_card', details: { rows: rates.length, currency } });
  });
  return getRateCard(db);
}

/** The stored card (no rows, currency and updated_at null before the first load). */
export async function getRateCard(db: Db): Promise<RateCard> {
  const head = await selectRateCardHead(db);
  if (!head) return { rows: [], currency: null, updated_at: null };
  const rows = await selectRates(db);
  return {
    rows: rows.map((r) => ({ country: r.country, category: r.category as RateCategory, price: Number(r.price), currency: head.currency ?? '' })),
    currency: head.currency,
    updated_at: new Date(head.updated_at),
  };
}

/** A card ready to price messages: its currency and each price by `COUNTRY/CATEGORY`. */
export interface PriceCard {
  currency: string | null;
  prices: ReadonlyMap<string, number>;
}

/** Indexes a card for {@link priceOf}. */
export function priceCard(card: Pick<RateCard, 'rows' | 'currency'>): PriceCard {
  return { currency: card.currency, prices: new Map(card.rows.map((r) => [`${r.country}/${r.category}`, r.price])) };
}

/** What one message costs: a price in the card's currency, free, or unknown (no rate for its country and category). */
export type MessagePrice = { price: number; currency: string } | { free: true } | { unknown: true };

/**
 * The price of one delivered message (docs/whatsapp.md "Pricing and the rate card"):
 * - a service (non-template) message (`category` null or `SERVICE`) is free;
 * - a UTILITY template delivered while the recipient's customer-service window is open is free;
 * - otherwise the card's price for the country of `phone` (E.164; the country of its calling code,
 *   libphonenumber-js) and the category; unknown when the number has no country (e.g. +800), the
 *   category is not priced, or the card has no such row.
 */
export function priceOf(card: PriceCard, message: { phone: string; category: string | null; windowOpen: boolean }): MessagePrice {
  const { phone, category, windowOpen } = message;
  if (category === null || category === 'SERVICE') return { free: true };
  if (category === 'UTILITY' && windowOpen) return { free: true };
  const country = countryOf(phone);
  const price = country === '' ? undefined : card.prices.get(`${country}/${category}`);
  if (price === undefined || card.currency === null) return { unknown: true };
  return { price, currency: card.currency };
}
