/**
 * Event endpoints of a company (docs/events.md): where a company's systems receive signed
 * events. Used by the operator API (http/admin/event-endpoints.ts), the CLI through it, and the
 * console (console/routes/webhooks.ts).
 *
 * - URLs must be http(s) and pass the network guard (`checkProviderUrl`): 422 otherwise.
 * - Event types must be among EVENT_TYPES (422); the default is all of them.
 * - At most MAX_ENDPOINTS_PER_COMPANY per company: the 21st is answered 409. The count is checked with
 *   the company row locked, so concurrent creations cannot exceed it.
 * - The secret is `whsec_` + base64 of 24 random bytes, generated here, shown on creation, rotation
 *   and reveal, sealed at rest (AppDeps.sealSecret) and never part of a list.
 * - Every change (and reveal, test, replay, resend) is a command taking an `Actor` that records its
 *   audit entry on `event_endpoint:<id>` (`event:<id>` for resend); a console actor acts on its own
 *   company only, and another company's endpoint answers 404 like an unknown one.
 */
import { randomBytes } from 'node:crypto';
import type { Db } from '../db/database.ts';
import { audit, type Actor } from './actor.ts';
import {
  countEndpoints, deleteEndpointRow, insertEndpoint, lockCompany, replayEndpoint, requeueEvent, selectEndpoint,
  selectEndpoints, selectEvent, updateEndpointRow, type EndpointRow,
} from '../db/events.ts';
import { DomainError, isRowId, notFound } from './errors.ts';
import { checkProviderUrl, type AddressPolicy } from '../delivery/network-guard.ts';

/** The event types: the delivery loop's nine (docs/events.md) and WhatsApp's three (docs/whatsapp.md). */
export const EVENT_TYPES = [
  'message.sent', 'message.delivered', 'message.read', 'message.failed', 'message.skipped',
  'batch.completed', 'contact.opted_out', 'contact.opted_in', 'message.received',
  'whatsapp.template.updated', 'channel.paused', 'channel.resumed',
] as const;

export type EventType = (typeof EVENT_TYPES)[number];

/** Most endpoints one company may have. */
export const MAX_ENDPOINTS_PER_COMPANY = 20;

/** Longest endpoint URL and description. */
export const URL_MAX = 2048;
export const DESCRIPTION_MAX = 500;

/** An endpoint as answered (no secret). */
export interface EndpointView {
  endpoint_id: number;
  company_id: number;
  url: string;
  events: string[];
  description: string | null;
  enabled: boolean;
  disabled_reason: string | null;
  failing_since: string | null;
  created_at: string;
}

/** What the routes need: sealing and the address policy. */
export interface EndpointDeps {
  sealSecret(plaintext: string): string;
  openSecret(sealed: string): string;
  addressPolicy: AddressPolicy;
}

/** The answer shape of an endpoint (never the secret). */
export function endpointView(e: EndpointRow): EndpointView {
  return {
    endpoint_id: e.endpoint_id,
    company_id: e.company_id,
    url: e.url,
    events: e.events,
    description: e.description,
    enabled: e.enabled,
    disabled_reason: e.disabled_reason,
    failing_since: e.failing_since ? new Date(e.failing_since).toISOString() : null,
    created_at: new Date(e.created_at).toISOString(),
  };
}

/** A new signing secret: `whsec_` + base64 of 24 random bytes. */
export function newEndpointSecret(): string {
  return 'whsec_' + randomBytes(24).toString('base64');
}

/** Checks a URL (422 with the reason when it is not acceptable). */
export async function checkEndpointUrl(url: string, policy: AddressPolicy): Promise<void> {
  if (url.length > URL_MAX) throw new DomainError(422, `url must have at most ${URL_MAX} characters`);
  const problem = await checkProviderUrl(url, policy);
  if (problem) throw new DomainError(422, `url ${problem}`);
}

/** Checks event types (422 naming the unknown one); returns them de-duplicated in §5 order. */
export function checkEventTypes(events: readonly string[]): string[] {
  const unknown = events.find((t) => !(EVENT_TYPES as readonly string[]).includes(t));
  if (unknown !== undefined) throw new DomainError(422, `unknown event type ${unknown}; known: ${EVENT_TYPES.join(', ')}`);
  if (events.length === 0) throw new DomainError(422, 'events must name at least one event type');
  return EVENT_TYPES.filter((t) => events.includes(t));
}

export interface EndpointInput { url: string; events?: string[]; description?: string | null }

/** The company an actor may act on endpoints of: its own (console user, API key), or the one named (operator; undefined: any). */
function endpointScope(actor: Actor, companyId?: number): number | undefined {
  return actor.kind === 'operator' ? companyId : actor.companyId;
}

/** Options of the endpoint commands: the operator's company scope, and the audit details a transport records instead of the default. */
export interface EndpointCommandOptions {
  /** Operator only: answer 404 unless the endpoint or event is this company's (a console actor is always limited to its own). */
  companyId?: number;
  /**
   * The entry's details instead of the command's default, from the endpoint as created or changed (the
   * console's forms record the fields as the form named them).
   */
  auditDetails?: (endpoint: EndpointView) => Record<string, unknown>;
}

const endpointAudit = (db: Db, actor: Actor, action: string, row: { endpoint_id: number; company_id: number }, details: Record<string, unknown> = {}) =>
  audit(db, actor, { action, target: `event_endpoint:${row.endpoint_id}`, companyId: row.company_id, details });

/**
 * Command: creates an endpoint of `companyId` (404 unknown company or not the actor's, 422 bad input,
 * 409 the 21st). Returns it with its secret (shown this once). Audited as `event_endpoint.create` with
 * `{url, events, description}` (or `opts.auditDetails`).
 */
export async function createEndpoint(db: Db, deps: EndpointDeps, actor: Actor, companyId: number, input: EndpointInput, opts: EndpointCommandOptions = {}): Promise<EndpointView & { secret: string }> {
  if (!isRowId(companyId) || endpointScope(actor, companyId) !== companyId) throw notFound('Company not found');
  await checkEndpointUrl(input.url, deps.addressPolicy);
  const events = checkEventTypes(input.events ?? EVENT_TYPES);
  const secret = newEndpointSecret();
  const row = await db.transaction().execute(async (trx) => {
    if (!(await lockCompany(trx, companyId))) throw notFound('Company not found');
    if ((await countEndpoints(trx, companyId)) >= MAX_ENDPOINTS_PER_COMPANY) {
      throw new DomainError(409, `a company can have at most ${MAX_ENDPOINTS_PER_COMPANY} event endpoints`);
    }
    return insertEndpoint(trx, { company_id: companyId, url: input.url, events, description: input.description ?? null, secret_sealed: deps.sealSecret(secret) });
  });
  const view = endpointView(row);
  await endpointAudit(db, actor, 'event_endpoint.create', row, opts.auditDetails?.(view) ?? { url: view.url, events: view.events, description: view.description });
  return { ...view, secret };
}

/** The endpoints of a company (404 unknown company is the caller's check). */
export async function listEndpoints(db: Db, companyId: number): Promise<EndpointView[]> {
  return (await selectEndpoints(db, companyId)).map(endpointView);
}

/** One endpoint row; 404 when unknown or (with `companyId`) another company's. */
export async function findEndpoint(db: Db, endpointId: number, companyId?: number): Promise<EndpointRow> {
  const row = isRowId(endpointId) ? await selectEndpoint(db, endpointId, companyId) : undefined;
  if (!row) throw notFound('Event endpoint not found');
  return row;
}

/** The endpoint `endpointId` as `actor` may see it; 404 when unknown or outside the actor's scope. */
export async function findEndpointFor(db: Db, actor: Actor, endpointId: number, opts: { companyId?: number } = {}): Promise<EndpointRow> {
  return findEndpoint(db, endpointId, endpointScope(actor, opts.companyId));
}

export interface EndpointPatch { url?: string; events?: string[]; description?: string | null; enabled?: boolean }

/**
 * Command: changes an endpoint (404, 422 as on creation). Returns the endpoint and the row before.
 * Audited as `event_endpoint.update` with the patch as given (or `opts.auditDetails`).
 */
export async function updateEndpoint(db: Db, deps: EndpointDeps, actor: Actor, endpointId: number, patch: EndpointPatch, opts: EndpointCommandOptions = {}): Promise<{ before: EndpointRow; after: EndpointView }> {
  const before = await findEndpointFor(db, actor, endpointId, opts);
  const change: Parameters<typeof updateEndpointRow>[2] = {};
  if (patch.url !== undefined) {
    await checkEndpointUrl(patch.url, deps.addressPolicy);
    change.url = patch.url;
  }
  if (patch.events !== undefined) change.events = checkEventTypes(patch.events);
  if (patch.description !== undefined) change.description = patch.description;
  if (patch.enabled !== undefined) change.enabled = patch.enabled;
  const row = await updateEndpointRow(db, before.endpoint_id, change);
  if (!row) throw notFound('Event endpoint not found');
  const after = endpointView(row);
  await endpointAudit(db, actor, 'event_endpoint.update', before, opts.auditDetails?.(after) ?? { ...patch });
  return { before, after };
}

/** Command: deletes an endpoint (404 when unknown / another company's); audited as `event_endpoint.delete` with `{url}`. Returns the deleted row. */
export async function removeEndpoint(db: Db, actor: Actor, endpointId: number, opts: { companyId?: number } = {}): Promise<EndpointRow> {
  const row = await findEndpointFor(db, actor, endpointId, opts);
  if (!(await deleteEndpointRow(db, row.endpoint_id))) throw notFound('Event endpoint not found');
  await endpointAudit(db, actor, 'event_endpoint.delete', row, { url: row.url });
  return row;
}

/** Command: replaces an endpoint's secret; returns the new one (shown once). Audited as `event_endpoint.rotate_secret`. */
export async function rotateEndpointSecret(db: Db, deps: EndpointDeps, actor: Actor, endpointId: number, opts: { companyId?: number } = {}): Promise<{ endpoint: EndpointView; secret: string }> {
  const row = await findEndpointFor(db, actor, endpointId, opts);
  const secret = newEndpointSecret();
  const after = await updateEndpointRow(db, row.endpoint_id, { secret_sealed: deps.sealSecret(secret) });
  if (!after) throw notFound('Event endpoint not found');
  await endpointAudit(db, actor, 'event_endpoint.rotate_secret', row);
  return { endpoint: endpointView(after), secret };
}

/** Command: the endpoint with its current secret, opened; audited as `event_endpoint.reveal_secret` (never the secret). */
export async function revealEndpointSecret(db: Db, deps: EndpointDeps, actor: Actor, endpointId: number, opts: { companyId?: number } = {}): Promise<{ endpoint: EndpointRow; secret: string }> {
  const row = await findEndpointFor(db, actor, endpointId, opts);
  const secret = deps.openSecret(row.secret_sealed);
  await endpointAudit(db, actor, 'event_endpoint.reveal_secret', row);
  return { endpoint: row, secret };
}

/** What a test send reports: whether the endpoint answered 2xx and its status (null: no answer). */
export interface TestOutcomeLike { ok: boolean; status_code: number | null }

/**
 * Command: sends one signed test event to an endpoint with `send` (the delivery side's test sender,
 * given the endpoint's URL, opened secret and id) and audits `event_endpoint.test` with `{ok,
 * status_code}`. 404 when unknown / another company's. Returns the sender's outcome.
 */
export async function testEndpoint<T extends TestOutcomeLike>(
  db: Db, deps: EndpointDeps, actor: Actor, endpointId: number,
  send: (target: { url: string; secret: string; endpointId: number }) => Promise<T>, opts: { companyId?: number } = {},
): Promise<{ endpoint: EndpointRow; outcome: T }> {
  const row = await findEndpointFor(db, actor, endpointId, opts);
  const outcome = await send({ url: row.url, secret: deps.openSecret(row.secret_sealed), endpointId: row.endpoint_id });
  await endpointAudit(db, actor, 'event_endpoint.test', row, { ok: outcome.ok, status_code: outcome.status_code });
  return { endpoint: row, outcome };
}

/**
 * Command: resends an event (same id) to each enabled subscribed endpoint; 404 unknown / another
 * company's. Audited as `event.resend` on `event:<id>` with `{deliveries}`.
 */
export async function resendEvent(db: Db, actor: Actor, eventId: string, opts: { companyId?: number } = {}): Promise<{ company_id: number; deliveries: number }> {
  const companyId = endpointScope(actor, opts.companyId);
  const event = /^evt_[0-9a-f]{32}$/.test(eventId) ? await selectEvent(db, eventId) : undefined;
  if (!event || (companyId !== undefined && event.company_id !== companyId)) throw notFound('Event not found');
  const deliveries = await requeueEvent(db, eventId);
  await audit(db, actor, { action: 'event.resend', target: `event:${eventId}`, companyId: event.company_id, details: { deliveries } });
  return { company_id: event.company_id, deliveries };
}

/** How far after now a replay's `since` may be (ms): a minute, for clocks that differ a little. */
export const REPLAY_SINCE_LEEWAY_MS = 60_000;

/**
 * Why a replay's `since` (ms) is out of range, or undefined: from 1970-01-01T00:00:00Z (no event is
 * older) to `now` (ms) plus {@link REPLAY_SINCE_LEEWAY_MS} (a later time would replay nothing;
 * docs/security.md "Durations and times"). `now` is the wall clock, the one that stamps events (the
 * database's `now()`), not the service's injectable clock.
 */
export function replaySinceProblem(since: number, now: number): string | undefined {
  if (since < 0) return 'since must not be before 1970-01-01T00:00:00Z';
  return since > now + REPLAY_SINCE_LEEWAY_MS ? `since must not be in the future (now is ${new Date(now).toISOString()})` : undefined;
}

/**
 * Command: replays to an endpoint every subscribed event of its company since `since`; returns how
 * many. 404 unknown / another company's; 409 when the endpoint is disabled. Audited as
 * `event_endpoint.replay` with `{since, events}`.
 */
export async function replayEvents(db: Db, actor: Actor, endpointId: number, since: Date, opts: { companyId?: number } = {}): Promise<{ endpoint: EndpointRow; events: number }> {
  const endpoint = await findEndpointFor(db, actor, endpointId, opts);
  if (!endpoint.enabled) throw new DomainError(409, 'the endpoint is disabled; enable it before replaying events');
  const events = await replayEndpoint(db, endpoint.endpoint_id, since);
  await endpointAudit(db, actor, 'event_endpoint.replay', endpoint, { since: since.toISOString(), events });
  return { endpoint, events };
}
