/**
 * Companies (docs/operator-api.md: POST/PATCH /admin/companies): the tenant, its subscription, default
 * country for phone numbers, delivery hours, connector state and delivery channel.
 */
import { insertCompany, selectCompanies, selectCompany, updateCompanyRow, type CompanyRow as Row } from '../db/companies.ts';
import type { Db } from '../db/database.ts';
import type { DeliveryHours, FrequencyCap } from '../db/schema.ts';
import type { ApiKeyLookupCache } from './api-keys.ts';
import { DomainError, isRowId } from './errors.ts';

export interface CompanyInput {
  name?: string;
  subscription_active?: boolean;
  default_country?: string;
  delivery_hours?: DeliveryHours | null;
  /** Inbound texts that opt a contact out of campaigns (docs/decisions.md#9-whatsapp-webhooks-in); stored trimmed. */
  opt_out_keywords?: string[];
  /** Inbound texts that opt a contact back in. */
  opt_in_keywords?: string[];
  /** At most `messages` campaign messages per contact within `per`, or null (docs/audience.md "Frequency caps"). */
  frequency_cap?: FrequencyCap | null;
}

export interface Company {
  company_id: number;
  name: string;
  subscription_active: boolean;
  default_country: string;
  delivery_hours: DeliveryHours | null;
  connector: { connected: boolean; provider: string | null };
  channel: { provider: string };
  opt_out_keywords: string[];
  opt_in_keywords: string[];
  frequency_cap: FrequencyCap | null;
  created_at: Date;
}

/** A frequency cap as stored (JSON text of exactly its two fields; checked by the caller, src/domain/frequency-caps.ts). */
function capText(cap: FrequencyCap): string {
  return JSON.stringify({ messages: cap.messages, per: cap.per });
}

/** Keywords as stored: trimmed, empty ones and duplicates (case-insensitively) dropped. */
export function cleanKeywords(list: string[]): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const k of list) {
    const t = k.trim();
    const folded = t.toLowerCase();
    if (!t || seen.has(folded)) continue;
    seen.add(folded);
    out.push(t);
  }
  return out;
}

/** Postgres unique_violation (23505) on the WhatsApp number index → 409 (docs/decisions.md#9-whatsapp-webhooks-in). */
function isNumberTaken(err: unknown): boolean {
  const e = err as { code?: string; constraint?: string; message?: string };
  return e?.code === '23505' && (e.constraint === 'companies_whatsapp_number' || /companies_whatsapp_number/.test(String(e.message)));
}

function present(row: Row): Company {
  return {
    company_id: row.company_id,
    name: row.name,
    subscription_active: row.subscription_active,
    default_country: row.default_country,
    delivery_hours: row.delivery_hours,
    connector: { connected: row.connector_connected, provider: row.connector_provider },
    channel: { provider: String(row.channel.provider ?? 'outbox') },
    opt_out_keywords: row.opt_out_keywords,
    opt_in_keywords: row.opt_in_keywords,
    frequency_cap: row.frequency_cap ?? null,
    created_at: row.created_at,
  };
}

/** Creates a company; `name` is required. */
export async function createCompany(db: Db, input: CompanyInput & { name: string }): Promise<Company> {
  const row = await insertCompany(db, {
    name: input.name,
    subscription_active: input.subscription_active ?? false,
    default_country: input.default_country ?? 'DE',
    delivery_hours: input.delivery_hours ? JSON.stringify(input.delivery_hours) : null,
    ...(input.opt_out_keywords ? { opt_out_keywords: cleanKeywords(input.opt_out_keywords) } : {}),
    ...(input.opt_in_keywords ? { opt_in_keywords: cleanKeywords(input.opt_in_keywords) } : {}),
    ...(input.frequency_cap ? { frequency_cap: capText(input.frequency_cap) } : {}),
  });
  return present(row);
}

/**
 * Changes the given fields; 404 `Company not found` for an unknown id. Drops the key-lookup `cache`
 * after the write (a lookup brings the default country and subscription).
 */
export async function updateCompany(db: Db, cache: ApiKeyLookupCache, companyId: number, input: CompanyInput): Promise<Company> {
  if (!isRowId(companyId)) throw new DomainError(404, 'Company not found');
  const set: Record<string, unknown> = {};
  if (input.name !== undefined) set.name = input.name;
  if (input.subscription_active !== undefined) set.subscription_active = input.subscription_active;
  if (input.default_country !== undefined) set.default_country = input.default_country;
  if (input.delivery_hours !== undefined) set.delivery_hours = input.delivery_hours ? JSON.stringify(input.delivery_hours) : null;
  if (input.opt_out_keywords !== undefined) set.opt_out_keywords = cleanKeywords(input.opt_out_keywords);
  if (input.opt_in_keywords !== undefined) set.opt_in_keywords = cleanKeywords(input.opt_in_keywords);
  if (input.frequency_cap !== undefined) set.frequency_cap = input.frequency_cap === null ? null : capText(input.frequency_cap);
  const row = await (Object.keys(set).length ? updateCompanyRow(db, companyId, set) : selectCompany(db, companyId))
    .finally(() => cache.invalidate());
  if (!row) throw new DomainError(404, 'Company not found');
  return present(row);
}

/** Reads one company; 404 when unknown. */
export async function getCompany(db: Db, companyId: number): Promise<Company> {
  if (!isRowId(companyId)) throw new DomainError(404, 'Company not found');
  const row = await selectCompany(db, companyId);
  if (!row) throw new DomainError(404, 'Company not found');
  return present(row);
}

/** Lists companies, newest first. */
export async function listCompanies(db: Db): Promise<Company[]> {
  return (await selectCompanies(db, 1000)).map(present);
}

/**
 * Connects or disconnects the push-messaging connector (docs/operator-api.md PUT .../connector). Drops the
 * key-lookup `cache` after the write (a lookup brings the connector state).
 */
export async function setConnector(db: Db, cache: ApiKeyLookupCache, companyId: number, connected: boolean, provider: string | null): Promise<Company> {
  if (!isRowId(companyId)) throw new DomainError(404, 'Company not found');
  const row = await updateCompanyRow(db, companyId, { connector_connected: connected, connector_provider: connected ? provider : null })
    .finally(() => cache.invalidate());
  if (!row) throw new DomainError(404, 'Company not found');
  return present(row);
}

/**
 * Stores the delivery channel (already validated; secrets already encrypted by the caller).
 * 404 for an unknown company; 409 when the WhatsApp `phone_number_id` belongs to another company
 * (docs/decisions.md#9-whatsapp-webhooks-in, unique index `companies_whatsapp_number`).
 */
export async function setChannel(db: Db, companyId: number, channel: Record<string, unknown>): Promise<Company> {
  if (!isRowId(companyId)) throw new DomainError(404, 'Company not found');
  let row;
  try {
    row = await updateCompanyRow(db, companyId, { channel: JSON.stringify(channel) });
  } catch (err) {
    if (isNumberTaken(err)) throw new DomainError(409, `phone_number_id ${String(channel.phone_number_id)} is already the WhatsApp channel of another company`);
    throw err;
  }
  if (!row) throw new DomainError(404, 'Company not found');
  return present(row);
}
