/**
 * The statements on `companies` of the operator API (src/domain/companies.ts decides what may be
 * written and how a row is shown): one statement per function, each answering the row's columns of
 * COMPANY_COLUMNS (undefined when no company has the id).
 */
import type { Db } from './database.ts';
import type { DeliveryHours, FrequencyCap } from './schema.ts';

/** The columns a company is read with. */
export const COMPANY_COLUMNS = ['company_id', 'name', 'subscription_active', 'default_country', 'delivery_hours', 'connector_connected', 'connector_provider', 'channel', 'opt_out_keywords', 'opt_in_keywords', 'created_at', 'frequency_cap'] as const;

/** A company as stored (COMPANY_COLUMNS). */
export interface CompanyRow {
  company_id: number; name: string; subscription_active: boolean; default_country: string;
  delivery_hours: DeliveryHours | null; connector_connected: boolean; connector_provider: string | null;
  channel: Record<string, unknown>; opt_out_keywords: string[]; opt_in_keywords: string[]; created_at: Date;
  frequency_cap: FrequencyCap | null;
}

/** Values of a new company (defaults of the table for the keyword lists when absent); JSON as text. */
export interface NewCompany {
  name: string; subscription_active: boolean; default_country: string; delivery_hours: string | null;
  opt_out_keywords?: string[]; opt_in_keywords?: string[];
  frequency_cap?: string | null;
}

/** Inserts a company; its row. */
export async function insertCompany(db: Db, values: NewCompany): Promise<CompanyRow> {
  return await db.insertInto('companies').values(values).returning(COMPANY_COLUMNS).executeTakeFirstOrThrow() as CompanyRow;
}

/** Sets the given columns (non-empty; JSON columns as text) of a company; its row, or undefined. */
export async function updateCompanyRow(db: Db, companyId: number, set: Record<string, unknown>): Promise<CompanyRow | undefined> {
  return await db.updateTable('companies').set(set).where('company_id', '=', companyId).returning(COMPANY_COLUMNS).executeTakeFirst() as CompanyRow | undefined;
}

/** One company's row, or undefined. */
export async function selectCompany(db: Db, companyId: number): Promise<CompanyRow | undefined> {
  return await db.selectFrom('companies').select(COMPANY_COLUMNS).where('company_id', '=', companyId).executeTakeFirst() as CompanyRow | undefined;
}

/** At most `limit` companies, newest first. */
export async function selectCompanies(db: Db, limit: number): Promise<CompanyRow[]> {
  return await db.selectFrom('companies').select(COMPANY_COLUMNS).orderBy('company_id', 'desc').limit(limit).execute() as CompanyRow[];
}

/** A company's default country (ISO 3166-1 alpha-2); throws when the company does not exist. */
export async function selectDefaultCountry(db: Db, companyId: number): Promise<string> {
  return (await db.selectFrom('companies').select('default_country').where('company_id', '=', companyId).executeTakeFirstOrThrow()).default_country;
}

/** True when company `companyId` exists. */
export async function companyExists(db: Db, companyId: number): Promise<boolean> {
  return (await db.selectFrom('companies').select('company_id').where('company_id', '=', companyId).executeTakeFirst()) !== undefined;
}

/** Locks company `companyId`'s row (FOR NO KEY UPDATE) until the transaction `db` ends. */
export async function lockCompanyRow(db: Db, companyId: number): Promise<void> {
  await db.selectFrom('companies').select('company_id').where('company_id', '=', companyId).forNoKeyUpdate().execute();
}
