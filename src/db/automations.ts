/**
 * Automations and campaigns (src/domain/automations.ts decides what may be written and triggered, and
 * drops its cached lookups after a write): one statement per function. The automation lookup of 4.3 is
 * a constant statement, run as a named prepared statement on PostgreSQL (db/prepared.ts).
 */
import { sql } from 'kysely';
import type { Db } from './database.ts';
import { executePrepared } from './prepared.ts';

/** The company's automation `automationId` as stored (every column); undefined if there is none. */
export async function findAutomationRow(db: Db, companyId: number, automationId: number) {
  const [row] = await executePrepared(db, db.selectFrom('automations').selectAll()
    .where('automation_id', '=', automationId).where('company_id', '=', companyId));
  return row;
}

/** A new automation's values (template as JSON text). */
export interface NewAutomation { name: string; type: string; active: boolean; template: string; expire_after: string | null }

/** Inserts an automation for company `companyId` if that company exists; its row, or undefined. */
export async function insertAutomation(db: Db, companyId: number, v: NewAutomation) {
  return db.insertInto('automations')
    .columns(['company_id', 'name', 'type', 'active', 'template', 'expire_after'])
    .expression((eb) => eb.selectFrom('companies').select([
      'company_id', eb.val(v.name).as('name'), eb.val(v.type).as('type'),
      eb.val(v.active).as('active'), eb.val(v.template).as('template'), eb.val(v.expire_after).as('expire_after'),
    ]).where('company_id', '=', companyId))
    .returningAll().executeTakeFirst();
}

/** Sets the given columns (JSON as text) of automation `automationId`; its row, or undefined. */
export async function updateAutomationRow(db: Db, automationId: number, set: Record<string, unknown>) {
  return db.updateTable('automations').set(set).where('automation_id', '=', automationId).returningAll().executeTakeFirst();
}

/** A new campaign's values (template as JSON text). */
export interface NewCampaign { name: string; template: string; expire_after: string | null; ignore_frequency_cap: boolean }

/** Inserts a campaign for company `companyId` if that company exists; its row, or undefined. */
export async function insertCampaign(db: Db, companyId: number, v: NewCampaign) {
  return db.insertInto('campaigns')
    .columns(['company_id', 'name', 'template', 'expire_after', 'ignore_frequency_cap'])
    .expression((eb) => eb.selectFrom('companies').select([
      'company_id', eb.val(v.name).as('name'), eb.val(v.template).as('template'), eb.val(v.expire_after).as('expire_after'),
      eb.val(v.ignore_frequency_cap).as('ignore_frequency_cap'),
    ]).where('company_id', '=', companyId))
    .returningAll().executeTakeFirst();
}

/** Company `companyId`'s campaign `campaignId` (every column), or undefined. */
export async function selectCampaign(db: Db, companyId: number, campaignId: number) {
  return db.selectFrom('campaigns').selectAll()
    .where('campaign_id', '=', campaignId).where('company_id', '=', companyId).executeTakeFirst();
}

/** Company `companyId`'s automations (every column), newest first: the archived ones when `archived`, else the others. */
export async function selectAutomations(db: Db, companyId: number, archived = false) {
  return db.selectFrom('automations').selectAll().where('company_id', '=', companyId)
    .where('archived_at', archived ? 'is not' : 'is', null).orderBy('automation_id', 'desc').execute();
}

/** Company `companyId`'s campaigns (every column), newest first: the archived ones when `archived`, else the others. */
export async function selectCampaigns(db: Db, companyId: number, archived = false) {
  return db.selectFrom('campaigns').selectAll().where('company_id', '=', companyId)
    .where('archived_at', archived ? 'is not' : 'is', null).orderBy('campaign_id', 'desc').execute();
}

/** Automation `automationId` (every column), of company `companyId` unless null; or undefined. */
export async function selectAutomationScoped(db: Db, automationId: number, companyId: number | null) {
  let q = db.selectFrom('automations').selectAll().where('automation_id', '=', automationId);
  if (companyId !== null) q = q.where('company_id', '=', companyId);
  return q.executeTakeFirst();
}

/** Campaign `campaignId` (every column), of company `companyId` unless null; or undefined. */
export async function selectCampaignScoped(db: Db, campaignId: number, companyId: number | null) {
  let q = db.selectFrom('campaigns').selectAll().where('campaign_id', '=', campaignId);
  if (companyId !== null) q = q.where('company_id', '=', companyId);
  return q.executeTakeFirst();
}

/** Sets the given columns (non-empty; JSON as text) of campaign `campaignId`; its row, or undefined. */
export async function updateCampaignRow(db: Db, campaignId: number, set: Record<string, unknown>) {
  return db.updateTable('campaigns').set(set).where('campaign_id', '=', campaignId).returningAll().executeTakeFirst();
}

/**
 * Archives automation `automationId` (of company `companyId` unless null) at `at`, or restores it when
 * `at` is null; archiving an archived one keeps its first `archived_at`. Its row, or undefined.
 */
export async function setAutomationArchived(db: Db, automationId: number, companyId: number | null, at: Date | null) {
  let q = db.updateTable('automations')
    .set({ archived_at: at === null ? null : sql<Date>`coalesce(archived_at, ${at})`, updated_at: new Date() })
    .where('automation_id', '=', automationId);
  if (companyId !== null) q = q.where('company_id', '=', companyId);
  return q.returningAll().executeTakeFirst();
}

/**
 * Archives campaign `campaignId` (of company `companyId` unless null) at `at`, or restores it when `at`
 * is null; archiving an archived one keeps its first `archived_at`. Its row, or undefined.
 */
export async function setCampaignArchived(db: Db, campaignId: number, companyId: number | null, at: Date | null) {
  let q = db.updateTable('campaigns')
    .set({ archived_at: at === null ? null : sql<Date>`coalesce(archived_at, ${at})` })
    .where('campaign_id', '=', campaignId);
  if (companyId !== null) q = q.where('company_id', '=', companyId);
  return q.returningAll().executeTakeFirst();
}

/** Which of `campaignIds` are campaigns of company `companyId` (archived ones included). */
export async function selectCompanyCampaignIds(db: Db, companyId: number, campaignIds: number[]): Promise<number[]> {
  const { rows } = await sql<{ id: number }>`
    SELECT campaign_id AS id FROM campaigns WHERE company_id = ${companyId}::int AND campaign_id = ANY(${campaignIds}::int[])`.execute(db);
  return rows.map((r) => r.id);
}

/** Which of `automationIds` are automations of company `companyId` (archived ones included). */
export async function selectCompanyAutomationIds(db: Db, companyId: number, automationIds: number[]): Promise<number[]> {
  const { rows } = await sql<{ id: number }>`
    SELECT automation_id AS id FROM automations WHERE company_id = ${companyId}::int AND automation_id = ANY(${automationIds}::int[])`.execute(db);
  return rows.map((r) => r.id);
}
