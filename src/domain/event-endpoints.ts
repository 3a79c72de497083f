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
 */
import { randomBytes } from 'node:crypto';
import type { Db } from '../db/database.ts';
import {
  countEndpoints, deleteEndpointRow, insertEndpoint, lockCompany, replayEndpoint, requeueEvent, selectEndpoint,
  selectEndpoints, selectEvent, updateEndpointRow, type EndpointRow,
} from '../db/events.ts';
import { DomainError, isRowId, notFound } from './errors.ts';
import { checkProviderUrl, type AddressPolicy } from './network-guard.ts';

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

/**
 * Creates an endpoint of `companyId` (404 unknown company, 422 bad input, 409 the 21st). Returns it
 * with its secret (shown this once).
 */
export async function createEndpoint(db: Db, deps: EndpointDeps, companyId: number, input: EndpointInput): Promise<EndpointView & { secret: string }> {
  if (!isRowId(companyId)) throw notFound('Company not found');
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
  return { ...endpointView(row), secret };
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

export interface EndpointPatch { url?: string; events?: string[]; description?: string | null; enabled?: boolean }

/** Changes an endpoint (404, 422 as on creation). Returns the endpoint and the row before. */
export async function updateEndpoint(db: Db, deps: EndpointDeps, endpointId: number, patch: EndpointPatch, companyId?: number): Promise<{ before: EndpointRow; after: EndpointView }> {
  const before = await findEndpoint(db, endpointId, companyId);
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
  return { before, after: endpointView(row) };
}

/** Deletes an endpoint (404 when unknown / another company's). Returns the deleted row. */
export async function removeEndpoint(db: Db, endpointId: number, companyId?: number): Promise<EndpointRow> {
  const row = await findEndpoint(db, endpointId, companyId);
  if (!(await deleteEndpointRow(db, row.endpoint_id))) throw notFound('Event endpoint not found');
  return row;
}

/** Replaces an endpoint's secret; returns the new one (shown once). */
export async function rotateEndpointSecret(db: Db, deps: EndpointDeps, endpointId: number, companyId?: number): Promise<{ endpoint: EndpointView; secret: string }> {
  const row = await findEndpoint(db, endpointId, companyId);
  const secret = newEndpointSecret();
  const after = await updateEndpointRow(db, row.endpoint_id, { secret_sealed: deps.sealSecret(secret) });
  if (!after) throw notFound('Event endpoint not found');
  return { endpoint: endpointView(after), secret };
}

/** The endpoint's current secret, opened. */
export async function revealEndpointSecret(db: Db, deps: EndpointDeps, endpointId: number, companyId?: number): Promise<string> {
  const row = await findEndpoint(db, endpointId, companyId);
  return deps.openSecret(row.secret_sealed);
}

/** Resends an event (same id) to each enabled subscribed endpoint; 404 unknown / another company's. */
export async function resendEvent(db: Db, eventId: string, companyId?: number): Promise<{ company_id: number; deliveries: number }> {
  const event = /^evt_[0-9a-f]{32}$/.test(eventId) ? await selectEvent(db, eventId) : undefined;
  if (!event || (companyId !== undefined && event.company_id !== companyId)) throw notFound('Event not found');
  return { company_id: event.company_id, deliveries: await requeueEvent(db, eventId) };
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

/** Replays to an endpoint every subscribed event of its company since `since`; returns how many. */
export async function replayEvents(db: Db, endpointId: number, since: Date, companyId?: number): Promise<{ endpoint: EndpointRow; events: number }> {
  const endpoint = await findEndpoint(db, endpointId, companyId);
  if (!endpoint.enabled) throw new DomainError(409, 'the endpoint is disabled; enable it before replaying events');
  return { endpoint, events: await replayEndpoint(db, endpoint.endpoint_id, since) };
}
