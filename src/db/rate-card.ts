/**
 * SQL of the operator's WhatsApp rate card (tables `whatsapp_rate_card` and `whatsapp_rates`,
 * migration 039; docs/whatsapp.md "Pricing and the rate card"), one statement per function. Prices are
 * decimal text (PostgreSQL `numeric`), in the card's one currency. A load runs {@link deleteRates},
 * {@link insertRates} and {@link upsertRateCard} in one transaction (src/domain/rate-card.ts).
 */
import { sql } from 'kysely';
import type { Db } from './database.ts';

/** One stored rate: country ISO 3166-1 alpha-2, category, price as decimal text. */
export interface RateRow {
  country: string;
  category: string;
  price: string;
}

/** The card's one row: its currency (null for an empty card) and when it was last replaced. */
export interface RateCardHead {
  currency: string | null;
  updated_at: Date;
}

/** Deletes every rate of the card; returns how many went. */
export async function deleteRates(db: Db): Promise<number> {
  const result = await sql`DELETE FROM whatsapp_rates`.execute(db);
  return Number(result.numAffectedRows ?? 0);
}

/** Inserts `rows` in one statement; returns how many. */
export async function insertRates(db: Db, rows: RateRow[]): Promise<number> {
  if (rows.length === 0) return 0;
  const result = await sql`
    INSERT INTO whatsapp_rates (country, category, price)
    SELECT t.country, t.category, t.price::numeric
    FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) AS t(country text, category text, price text)`.execute(db);
  return Number(result.numAffectedRows ?? 0);
}

/** Writes the card's one row: `currency` (null when empty) and updated_at = `at` (ms). */
export async function upsertRateCard(db: Db, currency: string | null, at: number): Promise<void> {
  await sql`
    INSERT INTO whatsapp_rate_card (card, currency, updated_at) VALUES (true, ${currency}, ${new Date(at).toISOString()}::timestamptz)
    ON CONFLICT (card) DO UPDATE SET currency = EXCLUDED.currency, updated_at = EXCLUDED.updated_at`.execute(db);
}

/** The card's one row, or undefined before the first load. */
export async function selectRateCardHead(db: Db): Promise<RateCardHead | undefined> {
  const result = await sql<RateCardHead>`SELECT currency, updated_at FROM whatsapp_rate_card WHERE card`.execute(db);
  return result.rows[0];
}

/** Every rate, by country then category; price as decimal text. */
export async function selectRates(db: Db): Promise<RateRow[]> {
  const result = await sql<RateRow>`
    SELECT country, category, price::text AS price FROM whatsapp_rates ORDER BY country, category`.execute(db);
  return result.rows;
}
