/**
 * Automations and campaigns, as operators define them (docs/operator-api.md) and as 4.3 / 4.4 look them up
 * (docs/decisions.md#3-outcomes-of-the-four-operations). Another company's id answers exactly like an unknown one.
 */
import { LRUCache } from 'lru-cache';
import { systemClock, type Clock } from '../clock.ts';
import type { Db } from '../db/database.ts';
import { findAutomationRow, insertAutomation, insertCampaign, selectCampaign, updateAutomationRow } from '../db/automations.ts';
import { DomainError, isRowId, notFound } from './errors.ts';
import { DEFAULT_CAMPAIGN_EXPIRE_AFTER } from './expiry.ts';
import type { Template } from './templates.ts';

export interface Automation {
  automation_id: number; company_id: number; name: string; type: string; active: boolean; template: Template;
  /** How long its messages stay worth sending (a duration such as `24h`), or null (src/domain/expiry.ts). */
  expire_after: string | null;
  created_at: Date; updated_at: Date;
}

export interface Campaign {
  campaign_id: number; company_id: number; name: string; template: Template; expire_after: string | null;
  /** Its messages are not held to the company's frequency cap (docs/audience.md "Frequency caps"). */
  ignore_frequency_cap: boolean;
  created_at: Date;
}

/**
 * Trigger lookups (4.3, the hot path), cached for at most 2 s, like API keys: a change made through this
 * process applies at once ({@link AutomationLookups.forget}, called by createAutomation and
 * updateAutomation after their write, which take the lookups for that), one made through another
 * process within 2 s. One per service, built in service.ts (AppDeps.automationLookups).
 */
export class AutomationLookups {
  readonly #db: Db;
  readonly #cache: LRUCache<string, Automation | false>;

  /** `clock`: the cache's time (the service's clock; tests pass a fake one). */
  constructor(db: Db, clock: Clock = systemClock) {
    this.#db = db;
    this.#cache = new LRUCache<string, Automation | false>({ max: 20_000, ttl: 2_000, perf: clock });
  }

  /** Drops cached trigger lookups (after an automation was created or changed). */
  forget(): void {
    this.#cache.clear();
  }

  /**
   * The automation that 4.3 may trigger: this company's, of type `api`, active. Throws 404
   * `Automation not found`, 400 `Automation is not of type 'api'` or 400 `Automation is not active`.
   */
  async findTriggerable(companyId: number, automationId: number | bigint): Promise<Automation> {
    if (!isRowId(automationId)) throw notFound('Automation not found');
    const key = `${companyId}:${automationId}`;
    let row = this.#cache.get(key);
    if (row === undefined) {
      const found = await findAutomationRow(this.#db, companyId, automationId);
      row = (found as unknown as Automation | undefined) ?? false;
      this.#cache.set(key, row);
    }
    if (!row) throw notFound('Automation not found');
    if (row.type !== 'api') throw new DomainError(400, "Automation is not of type 'api'");
    if (!row.active) throw new DomainError(400, 'Automation is not active');
    return row;
  }
}

/**
 * Creates an automation for the company; 404 when the company does not exist. Forgets `lookups` after
 * the write (a lookup of its id before may have cached "not found"); `db` must not be a transaction
 * that commits later.
 */
export async function createAutomation(
  db: Db, lookups: AutomationLookups, companyId: number,
  input: { name: string; type: string; active: boolean; template: Template; expire_after?: string | null },
): Promise<Automation> {
  if (!isRowId(companyId)) throw new DomainError(404, 'Company not found');
  const row = await insertAutomation(db, companyId, {
    name: input.name, type: input.type, active: input.active, template: JSON.stringify(input.template), expire_after: input.expire_after ?? null,
  }).finally(() => lookups.forget());
  if (!row) throw new DomainError(404, 'Company not found');
  return row as unknown as Automation;
}

/**
 * Changes name, type, active flag, template or expiry in one statement; 404 `Automation not found`.
 * Forgets `lookups` after the write, so 4.3 in this process sees the change at once; `db` must not be
 * a transaction that commits later (a lookup in between would cache the old row again).
 */
export async function updateAutomation(
  db: Db, lookups: AutomationLookups, automationId: number,
  input: { name?: string; type?: string; active?: boolean; template?: Template; expire_after?: string | null },
): Promise<Automation> {
  if (!isRowId(automationId)) throw notFound('Automation not found');
  const set: Record<string, unknown> = { updated_at: new Date() };
  if (input.name !== undefined) set.name = input.name;
  if (input.type !== undefined) set.type = input.type;
  if (input.active !== undefined) set.active = input.active;
  if (input.template !== undefined) set.template = JSON.stringify(input.template);
  if (input.expire_after !== undefined) set.expire_after = input.expire_after;
  const row = await updateAutomationRow(db, automationId, set).finally(() => lookups.forget());
  if (!row) throw notFound('Automation not found');
  return row as unknown as Automation;
}

/** Creates a campaign for the company (expire_after `24h`, ignore_frequency_cap false unless given); 404 when the company does not exist. */
export async function createCampaign(
  db: Db, companyId: number, input: { name: string; template: Template; expire_after?: string | null; ignore_frequency_cap?: boolean },
): Promise<Campaign> {
  if (!isRowId(companyId)) throw new DomainError(404, 'Company not found');
  const row = await insertCampaign(db, companyId, {
    name: input.name, template: JSON.stringify(input.template),
    expire_after: input.expire_after === undefined ? DEFAULT_CAMPAIGN_EXPIRE_AFTER : input.expire_after,
    ignore_frequency_cap: input.ignore_frequency_cap ?? false,
  });
  if (!row) throw new DomainError(404, 'Company not found');
  return row as unknown as Campaign;
}

/** This company's campaign; 404 `Campaign not found` otherwise. */
export async function findCampaign(db: Db, companyId: number, campaignId: number | bigint): Promise<Campaign> {
  if (!isRowId(campaignId)) throw notFound('Campaign not found');
  const row = await selectCampaign(db, companyId, campaignId);
  if (!row) throw notFound('Campaign not found');
  return row as unknown as Campaign;
}
