/**
 * The document-level half of the OpenAPI document (`/openapi.json`): info, servers,
 * tags, the shared components (error bodies, response headers, cross-cutting responses), the examples of
 * the four public operations, and {@link completeDocument}, which adds to every operation the answers
 * that the app itself gives whatever the route (the 307 of Starlette's routing, 503 while the database
 * is unreachable, 401 of the operator API's bearer check, 413 over the body limit, `x-request-id`).
 * Header objects are written out where they apply: a reader of one operation sees every answer whole.
 *
 * Error bodies (docs/api.md "Error bodies"): `{"detail": text}`, FastAPI's `HTTPValidationError`
 * (422), `{"error": text}` (429 only).
 */
import type { OpenAPIV3_1 } from 'openapi-types';
import { VALIDATION_ERROR_SCHEMAS } from './validation/index.ts';
import { WEBHOOK_EXAMPLES } from './webhooks/examples.ts';

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const json = (schema: object, examples?: Record<string, { summary: string; value: unknown }>) =>
  ({ content: { 'application/json': { schema, ...(examples ? { examples } : {}) } } });

/** `info` of the document: title, version, description and the license (`info-license-strict`). */
export const DOCUMENT_INFO = {
  title: 'Contact Messaging Service',
  version: '2.0.0',
  description: [
    'Segments of contacts, API automations and campaign sends, queued and delivered in the background through a messaging provider.',
    '',
    '- **Public API** (`/api/...`, tag `public`): four operations a company\'s integration calls, authenticated with the `service-api-key` header. Answers are byte-compatible with the original FastAPI service.',
    '- **Operator API** (`/admin/...`, tags `operator: ...`): companies, keys, templates, sends and event endpoints, authenticated with `Authorization: Bearer <ADMIN_TOKEN>`; the `cms` CLI is its client.',
    '- **Provider webhooks** (`/webhooks/...`): receipts and inbound messages from the providers, authenticated by their signatures.',
    '',
    'Every answer carries `x-request-id`, the id of the request in the service\'s logs. A path sent with one trailing slash too many or too few answers `307` with `Location` (Starlette\'s routing).',
  ].join('\n'),
  license: { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' },
} as const;

/** Every tag the document uses, with its description (`tag-description`); the lint test checks none is missing. */
export const TAGS: readonly { name: string; description: string }[] = [
  { name: 'public', description: 'The four operations of a company\'s integration (docs/api.md), authenticated with the `service-api-key` header. Per-company rate limits with `RateLimit-Policy` / `RateLimit` headers; 4.3 and 4.4 take an optional `Idempotency-Key`.' },
  { name: 'health', description: 'Liveness and readiness probes for load balancers and orchestrators; no authentication.' },
  { name: 'operations', description: 'Prometheus metrics; no authentication (keep the port off the internet or filter `/metrics` at the proxy).' },
  { name: 'webhooks', description: 'Receipts and inbound messages from the providers (docs/whatsapp.md). No token: every payload is authenticated by the provider\'s signature.' },
  { name: 'operator: companies', description: 'Companies (tenants): subscription, default country, delivery hours, opt-out keywords, connector and delivery channel.' },
  { name: 'operator: api keys', description: 'The `service-api-key`s of a company; a key is shown only in the answer that creates it.' },
  { name: 'operator: contacts', description: 'A company\'s contacts: bulk upsert and the state of one contact (opt-out, inbound messages, messages sent).' },
  { name: 'operator: segments', description: 'A company\'s segments of contacts.' },
  { name: 'operator: automations', description: 'API automations: their Liquid templates, previews and test sends.' },
  { name: 'operator: campaigns', description: 'Campaigns: their templates, previews, test sends and sends to a segment or a list of contacts.' },
  { name: 'operator: batches', description: 'Batches (one send) and their messages: progress, outcomes, cancellation.' },
  { name: 'operator: audit', description: 'The audit log of every change made through the operator API and the console.' },
  { name: 'operator: console users', description: 'People of a company who sign in to the console: invitations and roles.' },
  { name: 'operator: event endpoints', description: 'Signed event webhooks to a company\'s systems (docs/events.md): endpoints, secrets, the attempt log, resend and replay.' },
  { name: 'operator: whatsapp', description: 'A WhatsApp channel\'s template catalogue (synced from Meta, listed, submitted) and its state (docs/whatsapp.md).' },
];

/** An OpenAPI Header Object with its (JSON Schema 2020-12) schema. */
type HeaderObject = { description: string; schema: Record<string, unknown> };

/** Response headers, as header objects (components.headers and inline in route schemas). */
export const HEADERS = {
  'X-Request-Id': { description: 'The id of this request in the service\'s logs (the `x-request-id` sent by the client, else a generated UUID).', schema: { type: 'string', examples: ['0d8f6c7e-3b7a-4f51-9a43-2a1f0c9e5b21'] } },
  'RateLimit-Policy': { description: 'The company\'s limit of this operation (IETF RateLimit headers): `"<policy>";q=<requests>;w=<window seconds>`.', schema: { type: 'string', examples: ['"create_segment";q=10;w=1'] } },
  RateLimit: { description: 'What is left of the limit: `"<policy>";r=<remaining>;t=<seconds until a slot frees>`.', schema: { type: 'string', examples: ['"create_segment";r=9;t=1'] } },
  'Retry-After': { description: 'Whole seconds to wait before retrying.', schema: { type: 'string', pattern: '^[0-9]+$', examples: ['1'] } },
  'Idempotent-Replayed': { description: '`true` when this is the stored answer of an earlier request with the same Idempotency-Key and body.', schema: { type: 'string', enum: ['true'] } },
  'WWW-Authenticate': { description: 'The scheme to authenticate with.', schema: { type: 'string' } },
  Location: { description: 'The same URL with the trailing slash toggled, query string kept.', schema: { type: 'string', format: 'uri', examples: ['http://127.0.0.1:8000/api/segments/create'] } },
} satisfies Record<string, HeaderObject>;

/** A header of {@link HEADERS} as a route schema writes it (`@fastify/swagger` turns it into a header object). */
export function routeHeader(name: keyof typeof HEADERS, description?: string, example?: string): { description: string } & Record<string, unknown> {
  const h = HEADERS[name];
  return { ...h.schema, ...(example === undefined ? {} : { examples: [example] }), description: description ?? h.description };
}

/** FastAPI's ValidationError with `ctx` declared as the free-form object it is. */
function withFreeContext(schema: { properties: Record<string, object> }): object {
  return { ...schema, properties: { ...schema.properties, ctx: { ...schema.properties.ctx, additionalProperties: true } } };
}

/** Component schemas of the error bodies (FastAPI's names for the validation error). */
export const ERROR_COMPONENTS: Record<string, object> = {
  ...VALIDATION_ERROR_SCHEMAS,
  // FastAPI writes `ctx` as a bare `{"type": "object"}`, which generated clients type as an empty
  // record (`Record<string, never>`); it holds any values (`{"error": "Expecting value"}`, `{"min_length": 1}`).
  ValidationError: withFreeContext(VALIDATION_ERROR_SCHEMAS.ValidationError as { properties: Record<string, object> }),
  Detail: {
    type: 'object', required: ['detail'], title: 'Detail',
    properties: { detail: { type: 'string', title: 'Detail' } },
    examples: [{ detail: 'Not Found' }],
  },
  RateLimitError: {
    type: 'object', required: ['error'], title: 'RateLimitError',
    properties: { error: { type: 'string', title: 'Error', examples: ['Rate limit exceeded: 10 per 1 second'] } },
  },
};

const requestId = () => ({ 'x-request-id': structuredClone(HEADERS['X-Request-Id']) });
const header = (name: keyof typeof HEADERS) => structuredClone(HEADERS[name]);

/**
 * Response objects every route can give (see {@link completeDocument}), written out in each operation
 * (not `components.responses`), so that a reader of one operation sees every answer whole.
 */
export const SHARED_RESPONSES = {
  /** Starlette's routing (docs/decisions.md#1-request-handling-order, step 1): the path with one trailing slash added or removed. */
  trailingSlash: () => ({
    description: 'Answered instead when the path is sent with one trailing slash added or removed (Starlette\'s routing): no body; repeat the request at `Location`.',
    headers: { Location: header('Location'), ...requestId() },
  }),
  unavailable: () => ({
    description: 'The database cannot be reached; nothing was done. Retry after `Retry-After` seconds.',
    headers: { 'Retry-After': header('Retry-After'), ...requestId() },
    ...json(ref('Detail'), { unavailable: { summary: 'Database unreachable', value: { detail: 'Service unavailable' } } }),
  }),
  tooLarge: () => ({
    description: 'Request body larger than 1 MiB.',
    headers: requestId(),
    ...json(ref('Detail'), { too_large: { summary: 'Body over the limit', value: { detail: 'Request body too large' } } }),
  }),
  adminUnsupportedMediaType: (accepted: string) => ({
    description: `The body is not \`${accepted}\` (e.g. a form); nothing changed.`,
    headers: requestId(),
    ...json(ref('Detail'), { unsupported: { summary: 'A form instead of JSON', value: { detail: `Unsupported Media Type: send ${accepted}` } } }),
  }),
  adminUnauthorized: () => ({
    description: 'Missing or wrong operator token (`Authorization: Bearer <ADMIN_TOKEN>`).',
    headers: { 'WWW-Authenticate': { description: 'Always `Bearer`.', schema: { type: 'string', enum: ['Bearer'] } }, ...requestId() },
    ...json(ref('Detail'), {
      missing: { summary: 'No Authorization header', value: { detail: 'Not authenticated' } },
      wrong: { summary: 'Another token', value: { detail: 'Invalid admin token' } },
    }),
  }),
};

/**
 * `components` of the document besides the public request models (app.ts adds those). Typed as
 * `openapi-types` sees 3.1 components (whose schema type lacks 2020-12's `examples`): a cast.
 */
export const DOCUMENT_COMPONENTS = {
  schemas: ERROR_COMPONENTS,
  securitySchemes: {
    APIKeyHeader: { type: 'apiKey', in: 'header', name: 'service-api-key', description: 'A company\'s API key (`cms_live_…`), issued by an operator (`cms key create`) or in the console.' },
    AdminBearer: { type: 'http', scheme: 'bearer', description: 'The operator token, `ADMIN_TOKEN` (or the generated `DATA_DIR/admin-token`).' },
  },
} as OpenAPIV3_1.ComponentsObject & { schemas: Record<string, OpenAPIV3_1.SchemaObject> };

/**
 * `servers`: the server that serves the document (relative, so `/docs` "Try it out" works behind any
 * host name), then a local `npm start` with the default HOST and PORT. The same for every
 * configuration, so the document (and a client generated from it) does not depend on where it was read.
 */
export function documentServers(): { url: string; description: string }[] {
  return [
    { url: '/', description: 'This server (the one that served this document)' },
    { url: 'http://127.0.0.1:8000', description: 'A local `npm start` with the default HOST and PORT' },
  ];
}

/** `{"detail": text}` (docs/api.md#error-bodies), as a route's response schema. */
export const errorSchemas = {
  detail: json(ref('Detail')),
  validation: json(ref('HTTPValidationError')),
  rateLimit: json(ref('RateLimitError')),
} as const;

/** Named examples of one media type (OpenAPI Example Objects). */
export type Named = Record<string, { summary: string; value: unknown }>;

/** Examples of one public operation: the request body and the answers by status. */
export interface PublicExamples {
  readonly request: Named;
  readonly responses: Readonly<Record<number, Named>>;
}

const missing = (field: string, input: unknown) => ({ type: 'missing', loc: ['body', field], msg: 'Field required', input });
const notAuthenticated = { summary: 'No service-api-key header', value: { detail: 'Not authenticated' } };
const invalidKey = { summary: 'Unknown or revoked key', value: { detail: 'Invalid API key' } };
const unparseable = { summary: 'Body is not text, nested too deeply, or has an over-long number', value: { detail: 'There was an error parsing the body' } };
const jsonInvalid = { summary: 'Malformed JSON', value: { detail: [{ type: 'json_invalid', loc: ['body', 9], msg: 'JSON decode error', input: {}, ctx: { error: 'Expecting value' } }] } };
const idemMismatch = { summary: 'Idempotency-Key reused with another body', value: { detail: 'Idempotency-Key reused with a different request' } };
const idemMalformed = { summary: 'Malformed Idempotency-Key', value: { detail: 'Idempotency-Key must be 1 to 255 visible ASCII characters' } };
const idemInFlight = { 409: { in_flight: { summary: 'The first request with this key is still being handled', value: { detail: 'A request with this Idempotency-Key is still being processed' } } } };
const limited = (text: string) => ({ limited: { summary: 'Over the company\'s limit', value: { error: `Rate limit exceeded: ${text}` } } });
const common = { 401: { missing_key: notAuthenticated, invalid_key: invalidKey }, 413: { too_large: { summary: 'Body over 1 MiB', value: { detail: 'Request body too large' } } } };

/** Realistic examples of the four public operations, by operationId (answers as the service writes them). */
export const PUBLIC_EXAMPLES: Readonly<Record<string, PublicExamples>> = {
  create_segment: {
    request: { newsletter: { summary: 'A segment for newsletter subscribers', value: { name: 'Newsletter subscribers' } } },
    responses: {
      ...common,
      200: { created: { summary: 'Created', value: { name: 'Newsletter subscribers', segment_id: 42 } } },
      400: { limit: { summary: 'The company holds 20 segments already', value: { detail: 'Segment limit reached: a company can hold at most 20 segments' } }, unparseable },
      422: {
        missing: { summary: 'No name', value: { detail: [missing('name', {})] } },
        json_invalid: jsonInvalid,
      },
      429: limited('10 per 1 second'),
    },
  },
  manage_segment_contacts: {
    request: {
      add: { summary: 'Add two contacts by phone number', value: { contacts: ['+4915112345678', '015112345679'], mode: 'add' } },
      delete_hashed: { summary: 'Remove a contact by the SHA-256 of its E.164 number', value: { contacts: ['536afd523e19dc83fccba822ef5e4ca646111314aaf0aa286667c5bea18dd70b'], mode: 'delete', use_hashed_phone: true } },
    },
    responses: {
      ...common,
      200: { added: { summary: 'One of two numbers is a contact; it was added', value: { segment_id: 42, mode: 'add', contacts_provided: 2, contacts_found: 1, contacts_not_found: 1, contacts_processed: 1 } } },
      400: { unparseable },
      403: { no_subscription: { summary: 'The company has no active subscription', value: { detail: 'An active subscription is required' } } },
      404: { not_found: { summary: 'No such segment, or another company\'s', value: { detail: 'Segment not found' } } },
      409: { dynamic: { summary: 'A dynamic segment: its members follow its filter (docs/segments.md)', value: { detail: 'Segment is dynamic: its members follow its filter' } } },
      422: {
        invalid: {
          summary: 'Path and body errors, all in one answer',
          value: {
            detail: [
              { type: 'int_parsing', loc: ['path', 'segment_id'], msg: 'Input should be a valid integer, unable to parse string as an integer', input: 'newsletter' },
              { type: 'list_type', loc: ['body', 'contacts'], msg: 'Input should be a valid list', input: '+4915112345678' },
              { type: 'literal_error', loc: ['body', 'mode'], msg: "Input should be 'add' or 'delete'", input: 'remove', ctx: { expected: "'add' or 'delete'" } },
            ],
          },
        },
        json_invalid: jsonInvalid,
      },
      429: limited('1 per 1 minute'),
    },
  },
  trigger_automation: {
    request: {
      order_shipped: {
        summary: 'Two customers with their order data',
        value: {
          automation_id: 7,
          contacts: [
            { phone: '+4915112345678', first_name: 'Anna', last_name: 'Schmidt', variables: { order_id: 'A-1042', delivery_date: '2026-06-02' } },
            { phone: '+4917612345678', first_name: 'Jonas', variables: { order_id: 'A-1043', delivery_date: '2026-06-03' } },
          ],
          url: 'https://shop.example.com/orders/track',
        },
      },
    },
    responses: {
      ...common,
      200: { accepted: { summary: 'Queued for two contacts', value: { batch_id: '60e089af-5b2c-4f0e-9d55-0c1f3f4a2b7e', contacts: 2, status: 'accepted' } } },
      400: {
        not_api: { summary: 'The automation is not of type api', value: { detail: "Automation is not of type 'api'" } },
        inactive: { summary: 'The automation is inactive', value: { detail: 'Automation is not active' } },
        idempotency_key: idemMalformed,
        unparseable,
      },
      404: { not_found: { summary: 'No such automation, or another company\'s', value: { detail: 'Automation not found' } } },
      ...idemInFlight,
      422: {
        invalid: {
          summary: 'A URL without a scheme',
          value: { detail: [{ type: 'string_pattern_mismatch', loc: ['body', 'url'], msg: "String should match pattern '^https?://\\S+$'", input: 'shop.example.com/orders/track', ctx: { pattern: '^https?://\\S+$' } }] },
        },
        idempotency_key: idemMismatch,
      },
      429: limited('20 per 1 second'),
    },
  },
  connector_send: {
    request: { two_numbers: { summary: 'A campaign to two numbers', value: { campaign_id: 3, contacts: [{ phone: '+4915112345678' }, { phone: '+4917612345678' }] } } },
    responses: {
      ...common,
      200: { accepted: { summary: 'Queued for two contacts', value: { message: 'Campaign send queued for 2 contacts (batch b5251aaf-2c1e-4d7b-8f0a-3e9c6d1b2a40)', status: 'accepted' } } },
      400: { idempotency_key: idemMalformed, unparseable },
      403: { not_connected: { summary: 'The connector is not connected', value: { detail: 'The push-messaging connector is not connected' } } },
      404: { not_found: { summary: 'No such campaign, or another company\'s', value: { detail: 'Campaign not found' } } },
      ...idemInFlight,
      422: {
        missing: { summary: 'No contacts', value: { detail: [missing('contacts', { campaign_id: 3 })] } },
        idempotency_key: idemMismatch,
      },
      429: limited('1 per 10 second'),
    },
  },
};

/** Headers the service sends on every answer of that status (documented `required: true`). */
const ALWAYS: Readonly<Record<string, readonly string[]>> = {
  '*': ['x-request-id'],
  307: ['location'],
  409: ['retry-after'],
  429: ['retry-after', 'ratelimit-policy', 'ratelimit'],
  503: ['retry-after'],
};
const alwaysSent = (status: string, header: string) =>
  ALWAYS['*'].includes(header.toLowerCase()) || (ALWAYS[status] ?? []).includes(header.toLowerCase());

type Media = { schema?: unknown; examples?: Named };
type Operation = { operationId?: string; responses?: Record<string, Record<string, unknown>>; requestBody?: { required?: boolean; content?: Record<string, Media> }; tags?: string[] };
type Doc = { paths?: Record<string, Record<string, Operation>>; tags?: { name: string }[] };

/** Examples by operationId: the public operations' and the webhooks' (webhook-examples.ts). */
const EXAMPLES: Record<string, PublicExamples> = { ...PUBLIC_EXAMPLES, ...WEBHOOK_EXAMPLES };

/** Puts the examples of {@link EXAMPLES} on the operation's request body and answers (first media type). */
function applyExamples(op: Operation): void {
  const ex = op.operationId === undefined ? undefined : EXAMPLES[op.operationId];
  if (!ex) return;
  const first = (content: Record<string, Media> | undefined) => (content ? Object.values(content)[0] : undefined);
  const body = first(op.requestBody?.content);
  if (body && Object.keys(ex.request).length > 0) body.examples = ex.request;
  for (const [status, named] of Object.entries(ex.responses)) {
    const media = first(op.responses?.[status]?.content as Record<string, Media> | undefined);
    if (media) media.examples = named;
  }
}
const METHODS = new Set(['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace']);
const touchesDatabase = (path: string) => /^\/(api|admin|webhooks)\//.test(path);

/** Whether a (request body) schema accepts JSON `null`: its `type` is or lists `null`, or one of its `anyOf` / `oneOf` does. */
function admitsNull(schema: unknown): boolean {
  if (schema === null || typeof schema !== 'object') return false;
  const s = schema as { type?: unknown; anyOf?: unknown[]; oneOf?: unknown[] };
  if (s.type === 'null' || (Array.isArray(s.type) && s.type.includes('null'))) return true;
  return [...(s.anyOf ?? []), ...(s.oneOf ?? [])].some(admitsNull);
}

/**
 * `transformObject` of `@fastify/swagger`: adds to every operation what the app answers whatever the
 * route, unless the route documents it itself: `x-request-id` on every response; 307 (routing);
 * 503 on routes that read the database (`/api`, `/admin`, `/webhooks`); 401 on `/admin` (the bearer
 * check); 413 on routes with a body, and on `/admin` ones 415 (a body in another media type) and
 * `requestBody.required: false` when the body schema admits null; the examples of {@link EXAMPLES}; and keeps only the tags in use.
 * Returns the same (mutated) object.
 */
export function completeDocument<T extends object>(document: T): T {
  const doc = document as Doc;
  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    for (const [method, op] of Object.entries(item)) {
      if (!METHODS.has(method) || !op.responses) continue;
      applyExamples(op);
      const r = op.responses;
      r['307'] ??= SHARED_RESPONSES.trailingSlash();
      if (touchesDatabase(path)) r['503'] ??= SHARED_RESPONSES.unavailable();
      if (path.startsWith('/admin/')) r['401'] ??= SHARED_RESPONSES.adminUnauthorized();
      if (op.requestBody) r['413'] ??= SHARED_RESPONSES.tooLarge();
      if (op.requestBody && path.startsWith('/admin/')) {
        // The operator API answers 415 to a body in another media type (src/http/admin/plugin.ts), and a
        // body whose schema admits `null` may be left out (Fastify validates a missing body as null).
        const types = Object.keys(op.requestBody.content ?? {});
        r['415'] ??= SHARED_RESPONSES.adminUnsupportedMediaType(types.join(' or ') || 'application/json');
        if (types.every((t) => admitsNull(op.requestBody?.content?.[t]?.schema))) op.requestBody.required = false;
      }
      for (const [status, response] of Object.entries(r)) {
        if ('$ref' in response) continue;
        const headers = (response.headers ??= {}) as Record<string, Record<string, unknown>>;
        headers['x-request-id'] ??= requestId()['x-request-id'];
        for (const [name, h] of Object.entries(headers)) if (alwaysSent(status, name)) h.required = true;
      }
      op.responses = Object.fromEntries(Object.entries(r).sort(([a], [b]) => a.localeCompare(b)));
    }
  }
  // Only the tags some operation uses (TAGS also names those of routes still to come).
  const used = new Set(Object.values(doc.paths ?? {}).flatMap((item) => Object.values(item).flatMap((op) => op.tags ?? [])));
  if (doc.tags) doc.tags = doc.tags.filter((t) => used.has(t.name));
  return document;
}
