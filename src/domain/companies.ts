/**
 * Companies (docs/operator-api.md: POST/PATCH /admin/companies): the tenant, its subscription, default
 * country for phone numbers, delivery hours, connector state and delivery channel.
 *
 * Commands (each takes an `Actor` and records its audit entry on `company:<id>`): `createCompany`
 * (`company.create`), `changeCompany` (`company.update`), `resetRateLimits` (`rate_limits.reset`),
 * `setConnector` (`connector.set`), `changeChannel` (`channel.set`), `resumeChannel` (`channel.resume`).
 */
import { audit, type Actor } from './actor.ts';
import { resumeWhatsappChannel } from './whatsapp-channel.ts';
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

/**
 * Command: creates a company; `name` is required. Audited as `company.create` with the input as given
 * (`details`: the fields of `input`).
 */
export async function createCompany(db: Db, actor: Actor, input: CompanyInput & { name: string }): Promise<Company> {
  return db.transaction().execute(async (trx) => {
    const company = await insertCompanyOf(trx, input);
    await audit(trx, actor, { action: 'company.create', target: `company:${company.company_id}`, companyId: company.company_id, details: { ...input } });
    return company;
  });
}

async function insertCompanyOf(db: Db, input: CompanyInput & { name: string }): Promise<Company> {
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
 * Command: changes the given fields of a company (see {@link updateCompany}) and audits
 * `company.update` with the fields as given. 404 `Company not found` for an unknown id (nothing audited).
 */
export async function changeCompany(db: Db, cache: ApiKeyLookupCache, actor: Actor, companyId: number, input: CompanyInput): Promise<Company> {
  const company = await updateCompany(db, cache, companyId, input);
  await audit(db, actor, { action: 'company.update', target: `company:${company.company_id}`, companyId: company.company_id, details: { ...input } });
  return company;
}

/**
 * Changes the given fields (no audit entry: commands that call it record theirs, e.g.
 * {@link changeCompany}); 404 `Company not found` for an unknown id. Drops the key-lookup `cache`
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
 * Command: connects or disconnects the push-messaging connector (docs/operator-api.md PUT .../connector).
 * Drops the key-lookup `cache` after the write (a lookup brings the connector state), then audits
 * `connector.set` with the connector as set (`{connected, provider}`). 404 `Company not found`.
 */
export async function setConnector(db: Db, cache: ApiKeyLookupCache, actor: Actor, companyId: number, connected: boolean, provider: string | null): Promise<Company> {
  if (!isRowId(companyId)) throw new DomainError(404, 'Company not found');
  const row = await updateCompanyRow(db, companyId, { connector_connected: connected, connector_provider: connected ? provider : null })
    .finally(() => cache.invalidate());
  if (!row) throw new DomainError(404, 'Company not found');
  const company = present(row);
  await audit(db, actor, { action: 'connector.set', target: `company:${company.company_id}`, companyId: company.company_id, details: { ...company.connector } });
  return company;
}

/** The rate-limit windows of a company, as the service keeps them (src/http/rate-limit.ts builds the keys). */
export interface CompanyRateLimits {
  /** Empties every window of company `companyId`. */
  resetCompany(companyId: number): Promise<void>;
}

/**
 * Command: empties a company's rate-limit windows (the next request of each operation is admitted) and
 * audits `rate_limits.reset`. 404 `Company not found`.
 */
export async function resetRateLimits(db: Db, limits: CompanyRateLimits, actor: Actor, companyId: number): Promise<void> {
  const company = await getCompany(db, companyId);
  await limits.resetCompany(company.company_id);
  await audit(db, actor, { action: 'rate_limits.reset', target: `company:${company.company_id}`, companyId: company.company_id });
}

/**
 * Command: sets a paused WhatsApp channel active (src/domain/whatsapp-channel.ts) and audits
 * `channel.resume` with `{was_paused}`. 404 unknown company; 409 when the channel is not WhatsApp.
 * Returns whether it was paused.
 */
export async function resumeChannel(db: Db, actor: Actor, companyId: number, now: number): Promise<boolean> {
  const wasPaused = await resumeWhatsappChannel(db, companyId, now);
  await audit(db, actor, { action: 'channel.resume', target: `company:${companyId}`, companyId, details: { was_paused: wasPaused } });
  return wasPaused;
}

/**
 * Command: stores the delivery channel `stored` (already validated; secrets already sealed by the
 * caller) and audits `channel.set` with `shown` (the channel without secrets, as answered).
 * 404 for an unknown company; 409 when the WhatsApp `phone_number_id` belongs to another company
 * (docs/decisions.md#9-whatsapp-webhooks-in, unique index `companies_whatsapp_number`).
 */
export async function changeChannel(db: Db, actor: Actor, companyId: number, channel: { stored: Record<string, unknown>; shown: Record<string, unknown> }): Promise<Company> {
  const company = await setChannel(db, companyId, channel.stored);
  await audit(db, actor, { action: 'channel.set', target: `company:${company.company_id}`, companyId: company.company_id, details: channel.shown });
  return company;
}

/**
 * Stores the delivery channel (already validated, secrets sealed), with no audit entry (the benches'
 * setup; the operator's change is {@link changeChannel}). 404 unknown company; 409 number taken.
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
