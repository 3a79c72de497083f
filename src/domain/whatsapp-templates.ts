/**
 * The WhatsApp template catalogue (docs/whatsapp.md "Template catalogue"): Meta owns a company's
 * message templates; the service keeps a synced copy per company (table `whatsapp_templates`) and
 * reads it when sources are saved and messages are sent.
 *
 * - {@link syncCatalogue} and {@link submitCatalogueTemplate} are the commands of the operator API and
 *   the console (taking an Actor, recording their own audit entries: `whatsapp.templates.sync`,
 *   `whatsapp.template.submit`); the workers' periodic sync ({@link syncDueCatalogues}) is not audited.
 * - {@link syncTemplates} reads every page of Meta's list, checks every entry, and only then replaces
 *   the copy in one transaction (UPDATE known, INSERT new, DELETE gone). Meta refusing or being
 *   unreachable is 502 and malformed data from Meta is 502 too: in both cases nothing changes.
 * - {@link submitTemplate} submits a new template for review and stores Meta's answer.
 * - {@link templateAvailability} is what the send path asks before handing a message to Meta.
 * - {@link whatsappMappingProblems} is the create-time check of automations and campaigns (docs/whatsapp.md
 *   "Sources must map to an approved template"), shared by the operator API and the console.
 *
 * `parameters` counts the placeholders of a template, per component: `header` is 0 or 1 (the `{{n}}`
 * of a TEXT header) or the media kind (`"image"`, `"video"`, `"document"`; `"location"` for a
 * location header); `body` is the number of distinct `{{n}}` (or named `{{name}}`) placeholders in
 * the BODY text; `buttons` has one entry per button, in order: its URL's placeholders (0 for buttons
 * that are not URL buttons).
 */
import type { Clock } from '../clock.ts';
import { companyChannel } from '../db/channels.ts';
import type { Db } from '../db/database.ts';
import {
  claimDueSyncs, deleteGoneTemplates, findTemplate, insertTemplates, listTemplates, markSynced, templateStatus, updateTemplates,
  deleteOtherTemplate, upsertTemplate, type StoredTemplate, type TemplateRow,
} from '../db/whatsapp-templates.ts';
import { audit, type Actor } from './actor.ts';
import { DomainError, isRowId } from './errors.ts';
import { checkLiquid } from './render.ts';
import { listAutomations, listCampaigns } from './automations.ts';
import type { Template, TemplateProblem } from './templates.ts';
import { releaseWaiting, WAIT_REASONS } from '../db/whatsapp-channel.ts';

export type { StoredTemplate, TemplateRow } from '../db/whatsapp-templates.ts';

/** Where a WABA's templates live and the token that may read them (already opened). */
export interface GraphConnection {
  apiBaseUrl: string;
  wabaId: string;
  accessToken: string;
}

/**
 * Meta's template endpoints as the catalogue uses them (implemented by
 * src/providers/whatsapp/templates-api.ts). Failures reject with an Error named `GraphApiError` whose
 * message names Meta's error (never the access token).
 */
export interface TemplatesApi {
  /** Every template of the WABA, all pages. */
  list(conn: GraphConnection): Promise<unknown[]>;
  /** Submits a template for review; resolves to Meta's answer object. */
  submit(conn: GraphConnection, template: { name: string; language: string; category: string; components: unknown[] }): Promise<Record<string, unknown>>;
}

/** What the catalogue needs from the outside: Meta's template endpoints, the secret opener, the clock. */
export interface CatalogueDeps {
  api: TemplatesApi;
  /** Opens a sealed channel secret (the access token); throws when it cannot. */
  openSecret: (sealed: string) => string;
  clock: Clock;
}

/** A template's placeholder counts (see the module comment). */
export type TemplateParameters = TemplateRow['parameters'];

/** Meta sent (or a request gave) template data that cannot be read: `path` says where. */
export class TemplateDataError extends Error {
  readonly path: (string | number)[];
  constructor(path: (string | number)[], message: string) {
    super(message);
    this.path = path;
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const where = (path: (string | number)[]) => path.map((p, i) => (typeof p === 'number' ? `[${p}]` : i === 0 ? p : `.${p}`)).join('');

/** Distinct `{{1}}` / `{{name}}` placeholders in `text`. */
export function placeholderCount(text: string): number {
  return new Set([...text.matchAll(/\{\{\s*([A-Za-z0-9_]+)\s*\}\}/g)].map((m) => m[1])).size;
}

/**
 * The parameter counts of Meta's `components` (see the module comment). Throws TemplateDataError
 * (with the path under `at`) when the components are not Meta's shape.
 */
export function templateParameters(components: unknown, at: (string | number)[] = ['components']): TemplateParameters {
  if (!Array.isArray(components)) throw new TemplateDataError(at, 'is not an array');
  const params: TemplateParameters = { header: 0, body: 0, buttons: [] };
  components.forEach((c, i) => {
    const p = [...at, i];
    if (!isObject(c) || typeof c.type !== 'string') throw new TemplateDataError(p, 'is not a component with a `type`');
    switch (c.type.toUpperCase()) {
      case 'HEADER': {
        const format = c.format === undefined ? 'TEXT' : c.format;
        if (typeof format !== 'string') throw new TemplateDataError([...p, 'format'], 'is not a string');
        if (format.toUpperCase() === 'TEXT') {
          if (c.text !== undefined && typeof c.text !== 'string') throw new TemplateDataError([...p, 'text'], 'is not a string');
          params.header = Math.min(1, placeholderCount(String(c.text ?? ''))) as 0 | 1;
        } else {
          params.header = format.toLowerCase();
        }
        break;
      }
      case 'BODY':
        if (typeof c.text !== 'string') throw new TemplateDataError([...p, 'text'], 'is not a string');
        params.body = placeholderCount(c.text);
        break;
      case 'BUTTONS':
        if (!Array.isArray(c.buttons)) throw new TemplateDataError([...p, 'buttons'], 'is not an array');
        c.buttons.forEach((b, j) => {
          if (!isObject(b) || typeof b.type !== 'string') throw new TemplateDataError([...p, 'buttons', j], 'is not a button with a `type`');
          if (b.type.toUpperCase() === 'URL') {
            if (typeof b.url !== 'string') throw new TemplateDataError([...p, 'buttons', j, 'url'], 'is not a string');
            params.buttons.push(placeholderCount(b.url));
          } else {
            params.buttons.push(0);
          }
        });
        break;
      default:
        break; // FOOTER and others: no parameters
    }
  });
  return params;
}

const optionalString = (v: unknown, path: (string | number)[]): string | null => {
  if (v === undefined || v === null) return null;
  if (typeof v !== 'string') throw new TemplateDataError(path, 'is not a string');
  return v;
};

/** One template object of Meta's list as a catalogue row; throws TemplateDataError (path under `data[i]`). */
export function parseMetaTemplate(raw: unknown, index: number): TemplateRow {
  const at = ['data', index];
  if (!isObject(raw)) throw new TemplateDataError(at, 'is not an object');
  const id = typeof raw.id === 'number' && Number.isSafeInteger(raw.id) ? String(raw.id) : raw.id;
  if (typeof id !== 'string' || id === '') throw new TemplateDataError([...at, 'id'], 'is not a non-empty string');
  for (const f of ['name', 'language', 'status'] as const) {
    if (typeof raw[f] !== 'string' || raw[f] === '') throw new TemplateDataError([...at, f], 'is not a non-empty string');
  }
  let quality: string | null = null;
  if (raw.quality_score !== undefined && raw.quality_score !== null) {
    if (!isObject(raw.quality_score)) throw new TemplateDataError([...at, 'quality_score'], 'is not an object');
    quality = optionalString(raw.quality_score.score, [...at, 'quality_score', 'score']);
  }
  const rejected = optionalString(raw.rejected_reason, [...at, 'rejected_reason']);
  const components = raw.components ?? [];
  return {
    template_id: id,
    name: raw.name as string,
    language: raw.language as string,
    status: raw.status as string,
    category: optionalString(raw.category, [...at, 'category']),
    quality_score: quality,
    rejected_reason: rejected === 'NONE' ? null : rejected,
    parameters: templateParameters(components, [...at, 'components']),
    components: components as unknown[],
  };
}

/**
 * The WhatsApp channel of a company as a Graph connection: 404 unknown company; 409 when the channel
 * is not WhatsApp or has no `waba_id`, or its access token cannot be opened.
 */
export async function whatsappConnection(db: Db, companyId: number, openSecret: (sealed: string) => string): Promise<GraphConnection> {
  if (!isRowId(companyId)) throw new DomainError(404, 'Company not found');
  const channel = await companyChannel(db, companyId);
  if (!channel) throw new DomainError(404, 'Company not found');
  if (channel.provider !== 'whatsapp') throw new DomainError(409, 'the company\'s channel is not WhatsApp (PUT /admin/companies/{company_id}/channel)');
  if (typeof channel.waba_id !== 'string' || channel.waba_id === '') throw new DomainError(409, 'the company\'s WhatsApp channel has no waba_id (PUT /admin/companies/{company_id}/channel)');
  let accessToken: string;
  try {
    accessToken = openSecret(String(channel.access_token_sealed ?? ''));
  } catch {
    throw new DomainError(409, 'the WhatsApp access token cannot be opened (was SECRETS_KEY changed?): set the channel again');
  }
  return { apiBaseUrl: String(channel.api_base_url || 'https://graph.facebook.com/v21.0'), wabaId: channel.waba_id, accessToken };
}

/** Meta's failure as the 502 of the operator API (Meta's error in the detail; never the token). */
function metaRefused(err: unknown): DomainError {
  if (err instanceof Error && err.name === 'GraphApiError') return new DomainError(502, err.message);
  throw err;
}

/**
 * Syncs the company's catalogue with Meta (see the module comment) and returns how many templates it
 * now has. 404 / 409 as {@link whatsappConnection}; 502 when Meta refuses, cannot be reached or sends
 * data that cannot be read (then nothing changed).
 */
export async function syncTemplates(db: Db, companyId: number, deps: CatalogueDeps): Promise<number> {
  const conn = await whatsappConnection(db, companyId, deps.openSecret);
  let raw: unknown[];
  try {
    raw = await deps.api.list(conn);
  } catch (err) {
    throw metaRefused(err);
  }
  let rows: TemplateRow[];
  try {
    rows = raw.map((t, i) => parseMetaTemplate(t, i));
  } catch (err) {
    if (err instanceof TemplateDataError) throw new DomainError(502, `Meta answered template data that cannot be read: ${where(err.path)} ${err.message}; the catalogue is unchanged`);
    throw err;
  }
  const ids = new Set<string>();
  const names = new Set<string>();
  for (const r of rows) {
    const key = `${r.name}\u0000${r.language}`;
    if (ids.has(r.template_id) || names.has(key)) {
      throw new DomainError(502, `Meta answered template ${r.name} (${r.language}, id ${r.template_id}) twice; the catalogue is unchanged`);
    }
    ids.add(r.template_id);
    names.add(key);
  }
  const at = deps.clock.now();
  await db.transaction().execute(async (trx) => {
    await deleteGoneTemplates(trx, companyId, [...ids]);
    await updateTemplates(trx, companyId, rows, at);
    await insertTemplates(trx, companyId, rows, at);
    await markSynced(trx, companyId, at);
    // Messages waiting for a paused template are looked at again (they wait again if it still is).
    await releaseWaiting(trx, companyId, [WAIT_REASONS.templatePaused], at);
  });
  return rows.length;
}

/** The company's catalogue, by name then language; 404 for an unknown company. */
export async function listCatalogue(db: Db, companyId: number): Promise<StoredTemplate[]> {
  if (!isRowId(companyId) || !(await companyChannel(db, companyId))) throw new DomainError(404, 'Company not found');
  return listTemplates(db, companyId);
}

/** A template to submit for Meta's review. */
export interface TemplateSubmission {
  name: string;
  language: string;
  category: string;
  components: unknown[];
}

/**
 * Submits a template to Meta and stores Meta's answer (`id`, `status`, `category`) with the
 * parameters of the submitted components. 422 (TemplateDataError) when the components are not Meta's
 * shape (nothing sent); 404 / 409 as {@link whatsappConnection}; 502 when Meta refuses.
 */
export async function submitTemplate(db: Db, companyId: number, input: TemplateSubmission, deps: CatalogueDeps): Promise<StoredTemplate> {
  const parameters = templateParameters(input.components);
  const conn = await whatsappConnection(db, companyId, deps.openSecret);
  let answer: Record<string, unknown>;
  try {
    answer = await deps.api.submit(conn, input);
  } catch (err) {
    throw metaRefused(err);
  }
  const id = typeof answer.id === 'number' ? String(answer.id) : answer.id;
  if (typeof id !== 'string' || id === '') throw new DomainError(502, 'Meta accepted the template but answered no `id`');
  const row: TemplateRow = {
    template_id: id,
    name: input.name,
    language: input.language,
    status: typeof answer.status === 'string' && answer.status ? answer.status : 'PENDING',
    category: typeof answer.category === 'string' && answer.category ? answer.category : input.category,
    quality_score: null,
    rejected_reason: null,
    parameters,
    components: input.components,
  };
  const at = deps.clock.now();
  // A stale entry of the same name and language (deleted at Meta meanwhile) gives way to Meta's answer.
  return db.transaction().execute(async (trx) => {
    await deleteOtherTemplate(trx, companyId, row.name, row.language, row.template_id);
    return upsertTemplate(trx, companyId, row, at);
  });
}

/** 404 for a company the actor may not act on (a console user or API key acts on its own company only). */
function checkScope(actor: Actor, companyId: number): void {
  if (actor.kind !== 'operator' && actor.companyId !== companyId) throw new DomainError(404, 'Company not found');
}

/**
 * Command: syncs the company's catalogue with Meta ({@link syncTemplates}: 404 / 409 / 502, nothing
 * changed on failure) and audits `whatsapp.templates.sync` on `company:<id>` with `{templates}` for
 * `actor`. Returns how many templates the catalogue has now.
 */
export async function syncCatalogue(db: Db, deps: CatalogueDeps, actor: Actor, companyId: number): Promise<number> {
  checkScope(actor, companyId);
  const n = await syncTemplates(db, companyId, deps);
  await audit(db, actor, { action: 'whatsapp.templates.sync', target: `company:${companyId}`, companyId, details: { templates: n } });
  return n;
}

/**
 * Command: submits a template to Meta for review ({@link submitTemplate}: TemplateDataError, 404 / 409
 * / 502) and audits `whatsapp.template.submit` on `company:<id>` with `{name, language, template_id,
 * status}` for `actor`. Returns the template as stored.
 */
export async function submitCatalogueTemplate(db: Db, deps: CatalogueDeps, actor: Actor, companyId: number, input: TemplateSubmission): Promise<StoredTemplate> {
  checkScope(actor, companyId);
  const stored = await submitTemplate(db, companyId, input, deps);
  await audit(db, actor, {
    action: 'whatsapp.template.submit', target: `company:${companyId}`, companyId,
    details: { name: stored.name, language: stored.language, template_id: stored.template_id, status: stored.status },
  });
  return stored;
}

/** One template of the catalogue by name and language, or undefined. */
export function catalogueTemplate(db: Db, companyId: number, name: string, language: string): Promise<StoredTemplate | undefined> {
  return findTemplate(db, companyId, name, language);
}

/**
 * Whether the send path may use a template (docs/whatsapp.md "Sources must map to an approved
 * template"): `approved` (status APPROVED: send), `paused` (PAUSED: wait), `unavailable` (any other
 * status, or not in the catalogue: fail without calling Meta).
 */
export async function templateAvailability(db: Db, companyId: number, name: string, language: string): Promise<'approved' | 'paused' | 'unavailable'> {
  const status = await templateStatus(db, companyId, name, language);
  if (status === 'APPROVED') return 'approved';
  if (status === 'PAUSED') return 'paused';
  return 'unavailable';
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/**
 * Why `t` does not map to an approved template of `entry` (the catalogue entry its mapping names, or
 * undefined): problems with `loc` under the template, [] when it maps. Matched: status APPROVED; the
 * body's top-level `{{ }}` outputs = the template's body placeholders; the header kind (an image or
 * video header for a media header of that kind; a text header with as many outputs as the template's
 * text header placeholders, or no header when it has none); each of our buttons is a URL button of
 * the template at the same position, and every URL button with a placeholder has one of ours.
 */
export function mappingProblems(t: Template, entry: StoredTemplate | undefined): TemplateProblem[] {
  const wa = t.whatsapp;
  if (!wa) return [{ loc: ['whatsapp'], msg: 'the company\'s channel is WhatsApp: map this template to an approved WhatsApp template (`whatsapp`: {name, language})' }];
  const id = `${wa.name} (${wa.language})`;
  if (!entry) {
    return [{ loc: ['whatsapp', 'name'], msg: `the WhatsApp template ${id} is not in the company's catalogue (sync it: POST /admin/companies/{company_id}/whatsapp/templates/sync)` }];
  }
  const problems: TemplateProblem[] = [];
  if (entry.status !== 'APPROVED') problems.push({ loc: ['whatsapp', 'name'], msg: `the WhatsApp template ${id} is ${entry.status}, not APPROVED` });
  const p = entry.parameters;
  const body = checkLiquid(t.body);
  if (!body.problem && body.outputs !== p.body) {
    problems.push({ loc: ['body'], msg: `the WhatsApp template ${id} takes ${plural(p.body, 'body parameter')}, but the body has ${plural(body.outputs, 'top-level {{ }} output')}` });
  }
  const h = t.header;
  if (typeof p.header === 'string') {
    if (h.type !== p.header) problems.push({ loc: ['header', 'type'], msg: `the WhatsApp template ${id} has a ${p.header} header; this template's header is ${h.type === 'none' ? 'none' : h.type}${p.header === 'image' || p.header === 'video' ? `: use a header of type ${p.header}` : ' (not supported here)'}` });
  } else if (h.type === 'image' || h.type === 'video') {
    problems.push({ loc: ['header', 'type'], msg: `the WhatsApp template ${id} has no ${h.type} header` });
  } else {
    const outputs = h.type === 'text' ? checkLiquid(h.text) : { problem: undefined, outputs: 0 };
    if (!outputs.problem && outputs.outputs !== p.header) {
      problems.push({ loc: h.type === 'text' ? ['header', 'text'] : ['header'], msg: `the WhatsApp template ${id} takes ${plural(p.header, 'header parameter')}, but ${h.type === 'text' ? `the header text has ${plural(outputs.outputs, 'top-level {{ }} output')}` : 'this template has no header: use a text header'}` });
    }
  }
  const metaButtons = buttonTypes(entry.components);
  t.buttons.forEach((_, i) => {
    if (i >= p.buttons.length) problems.push({ loc: ['buttons', String(i)], msg: `the WhatsApp template ${id} has ${plural(p.buttons.length, 'button')}; this one has no counterpart` });
    else if (metaButtons[i] !== undefined && metaButtons[i] !== 'URL') problems.push({ loc: ['buttons', String(i)], msg: `button ${i + 1} of the WhatsApp template ${id} is ${metaButtons[i]}, not a URL button` });
  });
  p.buttons.forEach((n, j) => {
    if (n > 0 && j >= t.buttons.length) problems.push({ loc: ['buttons'], msg: `button ${j + 1} of the WhatsApp template ${id} is a URL button with a placeholder: add URL button ${j + 1} here` });
  });
  return problems;
}

/** Meta's button types (upper case) of a template's BUTTONS component, in order. */
function buttonTypes(components: unknown[]): (string | undefined)[] {
  const c = components.find((x) => isObject(x) && String(x.type).toUpperCase() === 'BUTTONS') as Record<string, unknown> | undefined;
  return Array.isArray(c?.buttons) ? c.buttons.map((b) => (isObject(b) && typeof b.type === 'string' ? b.type.toUpperCase() : undefined)) : [];
}

/**
 * The create-time check of an automation's or campaign's template (see {@link mappingProblems}):
 * [] when the company's channel is not WhatsApp, else the problems against its catalogue.
 */
export async function whatsappMappingProblems(db: Db, companyId: number, t: Template): Promise<TemplateProblem[]> {
  if (!isRowId(companyId)) return [];
  const channel = await companyChannel(db, companyId);
  if (channel?.provider !== 'whatsapp') return [];
  const entry = t.whatsapp ? await findTemplate(db, companyId, t.whatsapp.name, t.whatsapp.language) : undefined;
  return mappingProblems(t, entry);
}

/**
 * One warning per automation or campaign of the company whose template does not map to an approved
 * template of its catalogue (the answer of setting a WhatsApp channel), e.g.
 * `automation 31 (Order shipped): template.whatsapp.name: the WhatsApp template ... is PENDING, not APPROVED`.
 */
export async function unmappedSourceWarnings(db: Db, companyId: number): Promise<string[]> {
  const sources = [...await listAutomations(db, companyId), ...await listCampaigns(db, companyId)];
  const entries = new Map((await listTemplates(db, companyId)).map((e) => [`${e.name}\u0000${e.language}`, e]));
  const out: string[] = [];
  for (const src of sources) {
    const wa = src.template.whatsapp;
    const problems = mappingProblems(src.template, wa ? entries.get(`${wa.name}\u0000${wa.language}`) : undefined);
    if (problems.length) out.push(`${src.kind} ${src.id} (${src.name}): ${problems.map((p) => `template.${p.loc.join('.')}: ${p.msg}`).join('; ')}`);
  }
  return out;
}

/** The outcome of one periodic sync round: companies synced, and those that failed with why. */
export interface SyncRound {
  synced: number[];
  failed: { company_id: number; error: string }[];
}

/**
 * The periodic sync (WHATSAPP_TEMPLATE_SYNC): claims the WhatsApp companies with a `waba_id` whose
 * catalogue is older than `intervalMs` by the clock (at most `limit` per round) and syncs each. A
 * company whose sync fails keeps its catalogue and is tried again an interval later. Never throws
 * for one company's failure; the caller logs `failed`.
 */
export async function syncDueCatalogues(db: Db, deps: CatalogueDeps, intervalMs: number, limit = 20): Promise<SyncRound> {
  const now = deps.clock.now();
  const ids = await claimDueSyncs(db, now, now - intervalMs, limit);
  const round: SyncRound = { synced: [], failed: [] };
  for (const id of ids) {
    try {
      await syncTemplates(db, id, deps);
      round.synced.push(id);
    } catch (err) {
      round.failed.push({ company_id: id, error: err instanceof DomainError ? `${err.status}: ${err.detail}` : String((err as Error)?.message ?? err) });
    }
  }
  return round;
}

/** An approved template as the console's editor offers it. */
export interface ApprovedTemplate {
  name: string;
  language: string;
  parameters: TemplateParameters;
}

/**
 * The APPROVED templates of the company's catalogue (by name, then language) when its channel is
 * WhatsApp, else []: what the console's editor offers for the `whatsapp` mapping.
 */
export async function approvedTemplates(db: Db, companyId: number): Promise<ApprovedTemplate[]> {
  if (!isRowId(companyId)) return [];
  const channel = await companyChannel(db, companyId);
  if (channel?.provider !== 'whatsapp') return [];
  return (await listTemplates(db, companyId)).filter((t) => t.status === 'APPROVED')
    .map((t) => ({ name: t.name, language: t.language, parameters: t.parameters }));
}
