/**
 * Automations and campaigns (the sources of messages), as operators define, list and change them
 * (docs/operator-api.md) and as 4.3 / 4.4 look them up (docs/decisions.md#3-outcomes-of-the-four-operations).
 * Another company's id answers exactly like an unknown one. Their preview and test send are in
 * src/domain/source-tools.ts. Every template stored by create and update goes through
 * `normaliseTemplate` (src/domain/templates.ts): line endings are LF whichever way it came in.
 *
 * Either can be archived and restored ({@link archiveSource}, docs/operator-api.md "Archive and
 * restore"): an archived source keeps everything it had, is left out of the lists (unless they ask
 * for the archived ones) and cannot be sent: 4.3 answers an archived automation as an inactive one
 * (`400 Automation is not active`), 4.4 an archived campaign as an unknown one (`404 Campaign not
 * found`), and the operator's and the console's sends and test sends answer 404 (`assertSendable`).
 */
import { LRUCache } from 'lru-cache';
import { systemClock, type Clock } from '../clock.ts';
import type { Db } from '../db/database.ts';
import {
  findAutomationRow, insertAutomation, insertCampaign, selectAutomations, selectAutomationScoped, selectCampaign, selectCampaigns, selectCampaignScoped,
  setAutomationArchived, setCampaignArchived, updateAutomationRow, updateCampaignRow,
} from '../db/automations.ts';
import type { BatchKind } from '../db/schema.ts';
import { audit, type Actor } from './actor.ts';
import { DomainError, isRowId, notFound } from './errors.ts';
import { DEFAULT_CAMPAIGN_EXPIRE_AFTER } from './expiry.ts';
import { normaliseTemplate, type Template } from './templates.ts';

export interface Automation {
  automation_id: number; company_id: number; name: string; type: string; active: boolean; template: Template;
  /** How long its messages stay worth sending (a duration such as `24h`), or null (src/domain/expiry.ts). */
  expire_after: string | null;
  created_at: Date; updated_at: Date;
  /** When it was archived, or null. */
  archived_at: Date | null;
}

export interface Campaign {
  campaign_id: number; company_id: number; name: string; template: Template; expire_after: string | null;
  /** Its messages are not held to the company's frequency cap (docs/audience.md "Frequency caps"). */
  ignore_frequency_cap: boolean;
  created_at: Date;
  /** When it was archived, or null. */
  archived_at: Date | null;
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
    if (!row.active || row.archived_at) throw new DomainError(400, 'Automation is not active');
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
    name: input.name, type: input.type, active: input.active, template: JSON.stringify(normaliseTemplate(input.template)), expire_after: input.expire_after ?? null,
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
  if (input.template !== undefined) set.template = JSON.stringify(normaliseTemplate(input.template));
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
    name: input.name, template: JSON.stringify(normaliseTemplate(input.template)),
    expire_after: input.expire_after === undefined ? DEFAULT_CAMPAIGN_EXPIRE_AFTER : input.expire_after,
    ignore_frequency_cap: input.ignore_frequency_cap ?? false,
  });
  if (!row) throw new DomainError(404, 'Company not found');
  return row as unknown as Campaign;
}

/** This company's campaign, not archived; 404 `Campaign not found` otherwise. */
export async function findCampaign(db: Db, companyId: number, campaignId: number | bigint): Promise<Campaign> {
  if (!isRowId(campaignId)) throw notFound('Campaign not found');
  const row = await selectCampaign(db, companyId, campaignId);
  if (!row || row.archived_at) throw notFound('Campaign not found');
  return row as unknown as Campaign;
}

/** Which kind of source: an automation or a campaign. */
export type SourceKind = BatchKind;

/** An automation or campaign as lists and pages show it. */
export interface SourceRow {
  kind: SourceKind;
  id: number;
  company_id: number;
  name: string;
  /** Automations only. */
  type?: string;
  active?: boolean;
  template: Template;
  /** How long its messages stay worth sending (a duration such as `24h`), or null. */
  expire_after: string | null;
  /** Campaigns only: not held to the company's frequency cap (docs/audience.md). */
  ignore_frequency_cap?: boolean;
  created_at: Date;
  /** When it was archived (hidden from lists, cannot be sent), or null. */
  archived_at: Date | null;
}

const notFoundOf = (kind: SourceKind) => notFound(kind === 'automation' ? 'Automation not found' : 'Campaign not found');

/** The company's automations (newest first) as SourceRows: those not archived, or with `archived` only the archived ones. */
export async function listAutomations(db: Db, companyId: number, opts: { archived?: boolean } = {}): Promise<SourceRow[]> {
  if (!isRowId(companyId)) return [];
  const rows = await selectAutomations(db, companyId, opts.archived ?? false);
  return rows.map((r) => ({ kind: 'automation', id: r.automation_id, company_id: r.company_id, name: r.name, type: r.type, active: r.active, template: normaliseTemplate(r.template as unknown as Template), expire_after: r.expire_after ?? null, created_at: r.created_at as Date, archived_at: (r.archived_at as Date | null) ?? null }));
}

/** The company's campaigns (newest first) as SourceRows: those not archived, or with `archived` only the archived ones. */
export async function listCampaigns(db: Db, companyId: number, opts: { archived?: boolean } = {}): Promise<SourceRow[]> {
  if (!isRowId(companyId)) return [];
  const rows = await selectCampaigns(db, companyId, opts.archived ?? false);
  return rows.map((r) => ({ kind: 'campaign', id: r.campaign_id, company_id: r.company_id, name: r.name, template: normaliseTemplate(r.template as unknown as Template), expire_after: r.expire_after ?? null, ignore_frequency_cap: r.ignore_frequency_cap, created_at: r.created_at as Date, archived_at: (r.archived_at as Date | null) ?? null }));
}

/**
 * One automation or campaign; `companyId` scopes it (the console), null does not (the operator).
 * 404 `Automation not found` / `Campaign not found` otherwise.
 */
export async function findSource(db: Db, kind: SourceKind, id: number, companyId: number | null): Promise<SourceRow> {
  if (!isRowId(id)) throw notFoundOf(kind);
  if (kind === 'automation') {
    const r = await selectAutomationScoped(db, id, companyId);
    if (!r) throw notFoundOf(kind);
    return { kind, id: r.automation_id, company_id: r.company_id, name: r.name, type: r.type, active: r.active, template: normaliseTemplate(r.template as unknown as Template), expire_after: r.expire_after ?? null, created_at: r.created_at as Date, archived_at: (r.archived_at as Date | null) ?? null };
  }
  const r = await selectCampaignScoped(db, id, companyId);
  if (!r) throw notFoundOf(kind);
  return { kind, id: r.campaign_id, company_id: r.company_id, name: r.name, template: normaliseTemplate(r.template as unknown as Template), expire_after: r.expire_after ?? null, ignore_frequency_cap: r.ignore_frequency_cap, created_at: r.created_at as Date, archived_at: (r.archived_at as Date | null) ?? null };
}

/** Changes a campaign's name, template, expire_after and/or ignore_frequency_cap (already checked by the caller); 404 `Campaign not found`. */
export async function updateCampaign(
  db: Db, campaignId: number, input: { name?: string; template?: Template; expire_after?: string | null; ignore_frequency_cap?: boolean },
): Promise<SourceRow> {
  if (!isRowId(campaignId)) throw notFoundOf('campaign');
  const set: Record<string, unknown> = {};
  if (input.name !== undefined) set.name = input.name;
  if (input.template !== undefined) set.template = JSON.stringify(normaliseTemplate(input.template));
  if (input.expire_after !== undefined) set.expire_after = input.expire_after;
  if (input.ignore_frequency_cap !== undefined) set.ignore_frequency_cap = input.ignore_frequency_cap;
  if (Object.keys(set).length === 0) return findSource(db, 'campaign', campaignId, null);
  const r = await updateCampaignRow(db, campaignId, set);
  if (!r) throw notFoundOf('campaign');
  return { kind: 'campaign', id: r.campaign_id, company_id: r.company_id, name: r.name, template: normaliseTemplate(r.template as unknown as Template), expire_after: r.expire_after ?? null, ignore_frequency_cap: r.ignore_frequency_cap, created_at: r.created_at as Date, archived_at: (r.archived_at as Date | null) ?? null };
}

/** The SourceRow of an automation or campaign row as stored. */
function sourceRowOf(kind: SourceKind, r: Record<string, unknown>): SourceRow {
  const common = {
    company_id: r.company_id as number, name: r.name as string, template: normaliseTemplate(r.template as unknown as Template),
    expire_after: (r.expire_after as string | null) ?? null, created_at: r.created_at as Date, archived_at: (r.archived_at as Date | null) ?? null,
  };
  return kind === 'automation'
    ? { kind, id: r.automation_id as number, type: r.type as string, active: r.active as boolean, ...common }
    : { kind, id: r.campaign_id as number, ignore_frequency_cap: r.ignore_frequency_cap as boolean, ...common };
}

/**
 * Archives an automation or campaign at `now` (ms), or restores it (`archive` false); `companyId`
 * scopes it (the console), null does not (the operator). Archiving an archived one keeps its first
 * time, restoring one that is not archived changes nothing. Forgets `lookups` after the write (4.3 in
 * this process refuses an archived automation at once). 404 `Automation not found` / `Campaign not found`.
 */
export async function archiveSource(
  db: Db, lookups: AutomationLookups, kind: SourceKind, id: number, companyId: number | null, archive: boolean, now: number,
): Promise<SourceRow> {
  if (!isRowId(id)) throw notFoundOf(kind);
  const at = archive ? new Date(now) : null;
  const row = kind === 'automation'
    ? await setAutomationArchived(db, id, companyId, at).finally(() => lookups.forget())
    : await setCampaignArchived(db, id, companyId, at);
  if (!row) throw notFoundOf(kind);
  return sourceRowOf(kind, row as unknown as Record<string, unknown>);
}

/** 404 (`Automation not found` / `Campaign not found`, as an unknown one) when `source` is archived: it cannot be sent. */
export function assertSendable(source: SourceRow): void {
  if (source.archived_at) throw notFoundOf(source.kind);
}

/** What the commands below need of the service (AppDeps, src/http/deps.ts, has it). */
export interface SourceDeps {
  readonly database: { readonly db: Db };
  readonly automationLookups: AutomationLookups;
  readonly clock: Clock;
}

/** The company an actor may act on: null (any) for the operator, its own otherwise. */
const scopeOf = (actor: Actor): number | null => (actor.kind === 'operator' ? null : actor.companyId);

/** 404 unless `actor` may act on source `id` (any for the operator; the console's and a key's own company's). */
async function checkScope(db: Db, actor: Actor, kind: SourceKind, id: number): Promise<void> {
  const scope = scopeOf(actor);
  if (scope !== null) await findSource(db, kind, id, scope);
}

/**
 * Command: defines an automation of company `companyId` ({@link createAutomation}; the template already
 * checked by the caller) and records `automation.create` (details: the name; the operator's also
 * `type` and `active`, as its entries always had). 404 `Company not found`; for a console actor or a
 * key, `companyId` must be its own company.
 */
export async function defineAutomation(
  deps: SourceDeps, actor: Actor, companyId: number,
  input: { name: string; type: string; active: boolean; template: Template; expire_after?: string | null },
): Promise<Automation> {
  const scope = scopeOf(actor);
  if (scope !== null && scope !== companyId) throw new DomainError(404, 'Company not found');
  const db = deps.database.db;
  const a = await createAutomation(db, deps.automationLookups, companyId, input);
  await audit(db, actor, {
    action: 'automation.create', target: `automation:${a.automation_id}`, companyId: a.company_id,
    details: actor.kind === 'operator' ? { name: input.name, type: input.type, active: input.active } : { name: input.name },
  });
  return a;
}

/**
 * Command: changes an automation's name, type, active flag, template or expiry ({@link
 * updateAutomation}; only the fields given) and records `automation.update` (details: `name` and
 * `active` when given, `template_changed`). 404 `Automation not found` (another company's too, for a
 * console actor or a key).
 */
export async function changeAutomation(
  deps: SourceDeps, actor: Actor, automationId: number,
  input: { name?: string; type?: string; active?: boolean; template?: Template; expire_after?: string | null },
): Promise<Automation> {
  const db = deps.database.db;
  await checkScope(db, actor, 'automation', automationId);
  const a = await updateAutomation(db, deps.automationLookups, automationId, input);
  await audit(db, actor, {
    action: 'automation.update', target: `automation:${a.automation_id}`, companyId: a.company_id,
    details: { name: input.name, active: input.active, template_changed: input.template !== undefined },
  });
  return a;
}

/**
 * Command: activates or deactivates an automation (4.3 refuses an inactive one) and records
 * `automation.update` with details `{active}`. 404 as {@link changeAutomation}.
 */
export async function setAutomationActive(deps: SourceDeps, actor: Actor, automationId: number, active: boolean): Promise<Automation> {
  const db = deps.database.db;
  await checkScope(db, actor, 'automation', automationId);
  const a = await updateAutomation(db, deps.automationLookups, automationId, { active });
  await audit(db, actor, { action: 'automation.update', target: `automation:${a.automation_id}`, companyId: a.company_id, details: { active } });
  return a;
}

/**
 * Command: defines a campaign of company `companyId` ({@link createCampaign}; the template already
 * checked) and records `campaign.create` (details: the name, and `ignore_frequency_cap: true` when
 * set). 404 `Company not found`; for a console actor or a key, `companyId` must be its own company.
 */
export async function defineCampaign(
  deps: SourceDeps, actor: Actor, companyId: number,
  input: { name: string; template: Template; expire_after?: string | null; ignore_frequency_cap?: boolean },
): Promise<Campaign> {
  const scope = scopeOf(actor);
  if (scope !== null && scope !== companyId) throw new DomainError(404, 'Company not found');
  const db = deps.database.db;
  const c = await createCampaign(db, companyId, input);
  await audit(db, actor, {
    action: 'campaign.create', target: `campaign:${c.campaign_id}`, companyId: c.company_id,
    details: { name: c.name, ...(c.ignore_frequency_cap ? { ignore_frequency_cap: true } : {}) },
  });
  return c;
}

/**
 * Command: changes a campaign's name, template, expire_after and/or ignore_frequency_cap ({@link
 * updateCampaign}; the template already checked) and records `campaign.update` (details: `name` when
 * given, `template_changed`, `ignore_frequency_cap` when given). 404 `Campaign not found` (another
 * company's too, for a console actor or a key).
 */
export async function changeCampaign(
  deps: SourceDeps, actor: Actor, campaignId: number,
  input: { name?: string; template?: Template; expire_after?: string | null; ignore_frequency_cap?: boolean },
): Promise<SourceRow> {
  const db = deps.database.db;
  await checkScope(db, actor, 'campaign', campaignId);
  const c = await updateCampaign(db, campaignId, input);
  await audit(db, actor, {
    action: 'campaign.update', target: `campaign:${c.id}`, companyId: c.company_id,
    details: { name: input.name, template_changed: input.template !== undefined, ...(input.ignore_frequency_cap === undefined ? {} : { ignore_frequency_cap: input.ignore_frequency_cap }) },
  });
  return c;
}

/**
 * Command: whether a campaign ignores the company's frequency cap (docs/audience.md "Frequency caps");
 * records `campaign.update` with details `{ignore_frequency_cap}`. 404 as {@link changeCampaign}.
 */
export async function setCampaignFrequencyCap(deps: SourceDeps, actor: Actor, campaignId: number, ignore: boolean): Promise<SourceRow> {
  const db = deps.database.db;
  await checkScope(db, actor, 'campaign', campaignId);
  const c = await updateCampaign(db, campaignId, { ignore_frequency_cap: ignore });
  await audit(db, actor, { action: 'campaign.update', target: `campaign:${c.id}`, companyId: c.company_id, details: { ignore_frequency_cap: ignore } });
  return c;
}

/**
 * Command: archives (`archive` true) or restores an automation or campaign at the service clock's now
 * ({@link archiveSource}) and records `<kind>.archive` / `<kind>.restore` (details `{}`). 404
 * `Automation not found` / `Campaign not found` (another company's too, for a console actor or a key).
 */
export async function setSourceArchived(deps: SourceDeps, actor: Actor, kind: SourceKind, id: number, archive: boolean): Promise<SourceRow> {
  const db = deps.database.db;
  const source = await archiveSource(db, deps.automationLookups, kind, id, scopeOf(actor), archive, deps.clock.now());
  await audit(db, actor, { action: `${kind}.${archive ? 'archive' : 'restore'}`, target: `${kind}:${source.id}`, companyId: source.company_id, details: {} });
  return source;
}
