/**
 * Named shapes of the HTTP API, all taken from the generated `./openapi.ts`, so that they
 * follow the schemas the server validates with and cannot drift from them. `RequestBody<P, M>` and
 * `Answer<P, M, S>` pick the JSON request body and the JSON answer of status `S` of operation `M` on path `P`.
 */
import type { paths } from './openapi.ts';

/** HTTP methods as the generated `paths` spell them. */
export type Method = 'get' | 'put' | 'post' | 'delete' | 'patch';

/** The operation `M` of path `P`. */
type Operation<P extends keyof paths, M extends Method> = NonNullable<paths[P][M]>;

/** The JSON request body of `M P` (never when it takes none). */
export type RequestBody<P extends keyof paths, M extends Method> =
  Operation<P, M> extends { requestBody?: { content: { 'application/json': infer B } } } ? B : never;

/** The JSON answer of `M P` with status `S` (never when it has none). */
export type Answer<P extends keyof paths, M extends Method, S extends number = 200> =
  Operation<P, M> extends { responses: { [K in S]: { content: { 'application/json': infer B } } } } ? B : never;

/** One item of the operator API's 422 answer `{detail: [{type, loc, msg, input?}]}` (one shape for every route). */
export type ValidationItem = Answer<'/admin/companies', 'post', 422>['detail'][number];

/** Body of POST /admin/companies. */
export type CompanyCreate = RequestBody<'/admin/companies', 'post'>;

/** Body of PATCH /admin/companies/{company_id}: any subset of the company's fields. */
export type CompanyUpdate = RequestBody<'/admin/companies/{company_id}', 'patch'>;

/** Delivery window of a company: local times `HH:MM` in an IANA time zone. */
export type DeliveryHours = NonNullable<CompanyCreate['delivery_hours']>;

/** Message template of automations and campaigns (header, Liquid body, buttons, WhatsApp mapping). */
export type Template = RequestBody<'/admin/companies/{company_id}/automations', 'post'>['template'];

/** Body of PATCH /admin/automations/{automation_id}. */
export type AutomationUpdate = RequestBody<'/admin/automations/{automation_id}', 'patch'>;

/** Body of PUT /admin/companies/{company_id}/connector. */
export type ConnectorSettings = RequestBody<'/admin/companies/{company_id}/connector', 'put'>;

/** Body of PUT /admin/companies/{company_id}/channel (one shape per provider). */
export type ChannelSettings = RequestBody<'/admin/companies/{company_id}/channel', 'put'>;

/** Answer of GET /admin/batches/{batch_id}: status and funnel counts of a send batch. */
export type Batch = Answer<'/admin/batches/{batch_id}', 'get'>;

/** One message of GET /admin/batches/{batch_id}/messages. */
export type BatchMessage = NonNullable<Answer<'/admin/batches/{batch_id}/messages', 'get'>['messages']>[number];

/** Body of PUT /admin/companies/{company_id}/contacts. */
export type ContactsPut = RequestBody<'/admin/companies/{company_id}/contacts', 'put'>;

/** One contact of PUT /admin/companies/{company_id}/contacts. */
export type ContactInput = ContactsPut['contacts'][number];

/** Answer of PUT /admin/companies/{company_id}/contacts: `{created, updated, invalid}` counts. */
export type ContactsResult = Answer<'/admin/companies/{company_id}/contacts', 'put'>;

/** Body of PATCH /admin/event-endpoints/{endpoint_id}. */
export type EventEndpointUpdate = RequestBody<'/admin/event-endpoints/{endpoint_id}', 'patch'>;

/** The event types an endpoint may subscribe to (docs/events.md). */
export type EventType = NonNullable<RequestBody<'/admin/companies/{company_id}/event-endpoints', 'post'>['events']>[number];

/** Every {@link EventType}, for checking `--events` before sending. */
export const EVENT_TYPE_NAMES = [
  'message.sent', 'message.delivered', 'message.read', 'message.failed', 'message.skipped',
  'batch.completed', 'contact.opted_out', 'contact.opted_in', 'message.received',
  'whatsapp.template.updated', 'channel.paused', 'channel.resumed',
] as const satisfies readonly EventType[];
