/**
 * The request pipeline of the four public operations, in the order docs/decisions.md#1-request-handling-order fixes:
 * routing (Fastify) → body size (413) and parsing (400 / 422 json_invalid) → authentication (401) →
 * subscription (403, 4.2 only) → validation of path and body (422) → idempotency →
 * rate limit (429) → the operation. Each step is a named function below that either yields what the
 * next step needs or an early {@link Answer}; {@link registerPublicOperation} runs them in that order
 * and registers the route with its OpenAPI description ({@link describeOperation}). Each operation is
 * declared once (model, limit, handler, docs).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AuthContext } from '../domain/api-keys.ts';
import type { AnswerRecord } from '../domain/accept-writer.ts';
import { claimKey, completeKey, isValidIdempotencyKey, releaseKey, requestHash } from '../domain/idempotency.ts';
import { DomainError } from '../domain/errors.ts';
import { storable } from '../domain/storable.ts';
import { rateLimitRefusals } from '../metrics.ts';
import type { AuthResult } from './auth.ts';
import type { AppDeps } from './deps.ts';
import { sendJsonText } from './errors.ts';
import { rateLimitHeaders, rateLimitKey, type RateLimitRule } from './rate-limit.ts';
import { parseBody, renderValidationError, validateRequest, type BodyParse, type Model } from './validation/index.ts';
import { errorSchemas, routeHeader } from './openapi-schemas.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** The Content-Type header as the client sent it (public routes read every body as bytes). */
    sentContentType: string | undefined;
  }
}

export interface OperationContext<T> {
  readonly deps: AppDeps;
  readonly auth: AuthContext;
  readonly body: T;
  readonly path: Record<string, number | bigint>;
  readonly request: FastifyRequest;
  /**
   * The request's claimed Idempotency-Key (operations with `idempotent`), undefined without the
   * header. An operation with `recordsAnswer` stores its 200 answer under it itself, in the transaction
   * that writes what the answer reports (see {@link answerRecord}).
   */
  readonly idempotencyKey: string | undefined;
}

/**
 * The idempotency record of a 200 answer for `key` (undefined without a key): what an operation with
 * `recordsAnswer` hands to the accept transaction (domain/accept-writer.ts). The body text is exactly
 * what the pipeline sends, `JSON.stringify(answer)`.
 */
export function answerRecord(key: string | undefined, answer: unknown): AnswerRecord | undefined {
  return key === undefined ? undefined : { key, status: 200, body: JSON.stringify(answer) };
}

export interface PublicOperation<T> {
  readonly operationId: string;
  readonly summary: string;
  readonly description: string;
  readonly url: string;                 // Fastify pattern, e.g. /api/segments/:segment_id/contacts
  readonly pathParams?: readonly string[];
  readonly model: Model<T>;
  readonly rule: RateLimitRule;
  readonly requiresSubscription?: boolean;
  /** Honours the optional Idempotency-Key header (4.3 and 4.4). */
  readonly idempotent?: boolean;
  /**
   * The handler commits its 200 answer under the Idempotency-Key itself (with {@link answerRecord}),
   * in the transaction that writes what the answer reports; otherwise the pipeline records it after.
   */
  readonly recordsAnswer?: boolean;
  readonly successSchema: object;
  /** Extra documented error statuses, e.g. { 404: 'Segment not found' }. */
  readonly errors: Readonly<Record<number, string>>;
  /** Returns the 200 body; throws DomainError for documented refusals. */
  handle(ctx: OperationContext<T>): Promise<unknown>;
}

const EMPTY = Buffer.alloc(0);

/**
 * The validated body made storable (see domain/storable.ts). U+0000 and lone surrogates can only come
 * from `\u` escapes or from UTF-8-encoded surrogates (bytes ED A0..BF), so a body without either needs
 * no walk at all.
 */
function storableBody<T>(raw: Buffer, body: T): T {
  return raw.includes('\\u') || raw.includes(0xed) || raw.includes(0) ? storable(body) : body; // 0: UTF-16/32 bodies
}

/** The first value of a request header, as Starlette reads it (Node would join repeated ones with ", "). */
function firstHeader(request: FastifyRequest, name: string): string | undefined {
  const raw = request.raw.rawHeaders;
  for (let i = 0; i < raw.length; i += 2) {
    if (raw[i].length === name.length && raw[i].toLowerCase() === name) return raw[i + 1].trim();
  }
  return undefined;
}

/** An early answer of a step: the status, the exact JSON text and extra headers. */
export interface Answer { readonly status: number; readonly text: string; readonly headers?: Record<string, string> }

const detail = (status: number, text: string, headers?: Record<string, string>): Answer =>
  ({ status, text: JSON.stringify({ detail: text }), headers });

function send(reply: FastifyReply, answer: Answer): FastifyReply {
  if (answer.headers) reply.headers(answer.headers);
  return sendJsonText(reply, answer.status, answer.text);
}

/** True when a step's outcome is an early answer. */
export const isAnswer = (v: unknown): v is Answer => typeof v === 'object' && v !== null && 'status' in v && 'text' in v;

/** Step 2: the body parsed (400 unparseable, 422 json_invalid); a missing body is validated later. */
export function parseStep(rawBody: Buffer, contentType: string | undefined): BodyParse | Answer {
  const body = parseBody(rawBody, contentType);
  if (body.kind === 'unparseable') return detail(400, 'There was an error parsing the body');
  if (body.kind === 'invalid') return { status: 422, text: renderValidationError(body.errors) };
  return body;
}

/** Step 3: the caller's company from `service-api-key` (401 with FastAPI's APIKeyHeader texts). */
export function authenticationStep(authn: AuthResult): AuthContext | Answer {
  if (authn.ok) return authn.auth;
  return detail(401, authn.detail, authn.detail === 'Not authenticated' ? { 'WWW-Authenticate': 'APIKey' } : undefined);
}

/** Step 4: 403 when the operation needs an active subscription and the company has none. */
export function subscriptionStep(op: Pick<PublicOperation<unknown>, 'requiresSubscription'>, auth: AuthContext): Answer | undefined {
  return op.requiresSubscription && !auth.subscriptionActive ? detail(403, 'An active subscription is required') : undefined;
}

/** Step 5: the path and body validated against the operation's model (422). */
export function validateStep<T>(op: Pick<PublicOperation<T>, 'model' | 'pathParams'>, body: BodyParse, rawParams: Readonly<Record<string, string>>):
  { body: T; path: Record<string, number | bigint> } | Answer {
  const validated = validateRequest(op.model, body, op.pathParams?.map((name) => ({ name, raw: rawParams[name] ?? '' })));
  if (!validated.ok) return { status: 422, text: renderValidationError(validated.errors) };
  return { body: validated.body, path: validated.path };
}

/** What a request brings to steps 2-5: its raw body, Content-Type and key as sent, its path parameters. */
export interface RequestInput {
  readonly rawBody: Buffer;
  readonly contentType: string | undefined;
  readonly apiKey: string | undefined;
  readonly params: Readonly<Record<string, string>>;
}

/** A request that passed steps 2-5: its company, validated body and path. */
export interface Admitted<T> { readonly auth: AuthContext; readonly body: T; readonly path: Record<string, number | bigint> }

/**
 * Steps 2-5 of docs/decisions.md#1-request-handling-order in their order: parsing, authentication (`authenticate`, the
 * service's ApiKeyAuthenticator; not called when parsing failed), subscription, validation. The first
 * failing step's answer, or what the later steps need. The route runs it; the oracle tests
 * (test/validation) replay the recorded FastAPI cases through it.
 */
export async function admit<T>(op: Pick<PublicOperation<T>, 'model' | 'pathParams' | 'requiresSubscription'>, input: RequestInput,
  authenticate: (apiKey: string | undefined) => Promise<AuthResult>): Promise<Admitted<T> | Answer> {
  const parsed = parseStep(input.rawBody, input.contentType);
  if (isAnswer(parsed)) return parsed;
  const auth = authenticationStep(await authenticate(input.apiKey));
  if (isAnswer(auth)) return auth;
  const noSubscription = subscriptionStep(op, auth);
  if (noSubscription) return noSubscription;
  const valid = validateStep(op, parsed, input.params);
  if (isAnswer(valid)) return valid;
  return { auth, body: valid.body, path: valid.path };
}

/**
 * Idempotency (after validation, before the rate limit: a replay costs the client nothing): claims the
 * Idempotency-Key; the claimed key (undefined without the header), or 400 malformed, 422 reused with a
 * different request, 409 in flight, or the first answer replayed.
 */
export async function idempotencyStep(deps: AppDeps, op: Pick<PublicOperation<unknown>, 'idempotent' | 'operationId'>, request: FastifyRequest, companyId: number, rawBody: Buffer):
  Promise<{ key: string | undefined } | Answer> {
  if (!op.idempotent || request.headers['idempotency-key'] === undefined) return { key: undefined };
  const key = firstHeader(request, 'idempotency-key') ?? '';
  if (!isValidIdempotencyKey(key)) return detail(400, 'Idempotency-Key must be 1 to 255 visible ASCII characters');
  const claim = await claimKey(deps.database.db, companyId, key, requestHash(op.operationId, rawBody), deps.clock.now());
  if (claim.kind === 'mismatch') return detail(422, 'Idempotency-Key reused with a different request');
  if (claim.kind === 'in_flight') return detail(409, 'A request with this Idempotency-Key is still being processed', { 'Retry-After': '1' });
  if (claim.kind === 'replay') return { status: claim.status, text: claim.body, headers: { 'Idempotent-Replayed': 'true' } };
  return { key };
}

/**
 * Step 6: the company's rate limit for the operation; sets the X-RateLimit headers either way. 429
 * when refused (and the claimed Idempotency-Key is freed: a refused request leaves nothing to replay).
 */
export async function rateLimitStep(deps: AppDeps, op: Pick<PublicOperation<unknown>, 'rule'>, request: FastifyRequest, reply: FastifyReply,
  companyId: number, idemKey: string | undefined): Promise<Answer | undefined> {
  const decision = await deps.rateLimiter.consume(rateLimitKey(companyId, op.rule), op.rule, deps.clock.now());
  reply.headers(rateLimitHeaders(op.rule, decision));
  if (decision.allowed) return undefined;
  request.log.info({ company_id: companyId, rule: op.rule.name }, 'rate limit exceeded');
  rateLimitRefusals.inc({ operation: op.rule.name });
  if (idemKey !== undefined) await releaseKey(deps.database.db, companyId, idemKey);
  return { status: 429, text: JSON.stringify({ error: `Rate limit exceeded: ${op.rule.text}` }) };
}

/**
 * Step 7: the operation. Its 200 answer, or a DomainError's documented answer, is recorded under the
 * Idempotency-Key (unless the operation recorded it itself); an unexpected error frees the key and is
 * rethrown (503 / 500 by the app's error handler).
 */
export async function operationStep<T>(ctx: OperationContext<T>, op: PublicOperation<T>): Promise<Answer> {
  const { deps, auth: { companyId }, idempotencyKey: key } = ctx;
  try {
    const text = JSON.stringify(await op.handle(ctx));
    if (key !== undefined && !op.recordsAnswer) await completeKey(deps.database.db, companyId, key, 200, text);
    return { status: 200, text };
  } catch (err) {
    if (err instanceof DomainError) {
      const text = JSON.stringify({ detail: err.detail });
      if (key !== undefined) await completeKey(deps.database.db, companyId, key, err.status, text);
      return { status: err.status, text };
    }
    if (key !== undefined) await releaseKey(deps.database.db, companyId, key).catch(() => {});
    throw err;
  }
}

/**
 * The route's OpenAPI description (documentation only: the public plugin neither validates nor
 * serialises with these schemas): the request model by `$ref`, the Idempotency-Key header, every
 * answer the steps above can give with its body and headers. Examples and the answers every route
 * shares (307, 503, `x-request-id`) are added to the document by `completeDocument`
 * (openapi-schemas.ts).
 */
export function describeOperation<T>(op: PublicOperation<T>): object {
  const { name, limit, windowMs } = op.rule;
  const limits = {
    'RateLimit-Policy': routeHeader('RateLimit-Policy', undefined, `"${name}";q=${limit};w=${windowMs / 1000}`),
    RateLimit: routeHeader('RateLimit', undefined, `"${name}";r=${limit - 1};t=${windowMs / 1000}`),
  };
  // Answers of the operation step (and 200) come after the rate limit and may be an Idempotency-Key replay.
  const afterLimit = { ...limits, ...(op.idempotent ? { 'Idempotent-Replayed': routeHeader('Idempotent-Replayed') } : {}) };
  const responses: Record<string, object> = {
    200: { description: 'Successful Response', headers: afterLimit, ...op.successSchema },
    400: { description: 'The body cannot be parsed (invalid UTF-8, nesting deeper than 512, a number over 4300 digits)', ...errorSchemas.detail },
    401: {
      description: 'Missing or invalid service-api-key',
      headers: { 'WWW-Authenticate': routeHeader('WWW-Authenticate', '`APIKey`, when the service-api-key header is missing or empty') },
      ...errorSchemas.detail,
    },
    413: { description: 'Request body larger than 1 MiB', ...errorSchemas.detail },
    422: { description: 'Validation Error', ...errorSchemas.validation },
    429: {
      description: `Rate limit exceeded (${op.rule.text})`,
      headers: {
        'RateLimit-Policy': limits['RateLimit-Policy'],
        RateLimit: routeHeader('RateLimit', undefined, `"${name}";r=0;t=${windowMs / 1000}`),
        'Retry-After': routeHeader('Retry-After', 'Whole seconds until a slot of the limit frees', String(windowMs / 1000)),
      },
      ...errorSchemas.rateLimit,
    },
  };
  for (const [status, text] of Object.entries(op.errors)) {
    responses[status] = { description: status === '400' ? `${text}; or the body cannot be parsed` : text, headers: afterLimit, ...errorSchemas.detail };
  }
  if (op.idempotent) {
    responses[400] = { ...(responses[400] as object), description: `${(responses[400] as { description: string }).description}; or a malformed Idempotency-Key` };
    responses[409] = {
      description: 'A request with the same Idempotency-Key is still being processed',
      headers: { 'Retry-After': routeHeader('Retry-After', 'Always 1', '1') },
      ...errorSchemas.detail,
    };
    responses[422] = {
      description: 'Validation Error, or Idempotency-Key reused with a different request',
      content: { 'application/json': { schema: { anyOf: [errorSchemas.validation.content['application/json'].schema, errorSchemas.detail.content['application/json'].schema] } } },
    };
  }
  const headers = op.idempotent
    ? {
      type: 'object',
      properties: {
        'idempotency-key': {
          type: 'string', minLength: 1, maxLength: 255, examples: ['order-A-1042-shipped'],
          description: 'Optional. The same key with the same body within 24 hours returns the first answer (with header Idempotent-Replayed: true) and creates nothing new; with a different body: 422; while the first request is in flight: 409. Keys are scoped per company.',
        },
      },
    }
    : undefined;
  const params = op.pathParams?.length
    ? { type: 'object', properties: Object.fromEntries(op.pathParams.map((p) => [p, { type: 'integer', title: p.replace(/_/g, ' ').replace(/\b\w/g, (c) => c.toUpperCase()), examples: [42] }])), required: [...op.pathParams] }
    : undefined;
  return {
    operationId: op.operationId,
    summary: op.summary,
    description: op.description,
    tags: ['public'],
    security: [{ APIKeyHeader: [] }],
    ...(params ? { params } : {}),
    ...(headers ? { headers } : {}),
    body: { $ref: `#/components/schemas/${op.model.name}` },
    response: responses,
  };
}

/**
 * Prepares the (raw-body) public plugin: every body is read as bytes whatever its Content-Type, which
 * is kept as sent in `request.sentContentType` for step 2 (Fastify would refuse a malformed one with
 * 415 before any parser runs; FastAPI hands the body to validation instead); validation and
 * serialisation are ours (Pydantic v2 semantics), not Fastify's.
 */
export function preparePublicPlugin(pub: FastifyInstance): void {
  pub.decorateRequest('sentContentType', undefined);
  pub.addHook('onRequest', async (request) => {
    const sent = request.headers['content-type'];
    request.sentContentType = sent;
    if (sent !== undefined) request.raw.headers['content-type'] = 'application/octet-stream';
  });
  pub.removeAllContentTypeParsers();
  pub.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));
  pub.setValidatorCompiler(() => () => true);
  pub.setSerializerCompiler(() => (data) => JSON.stringify(data));
}

/** Registers one public operation on the public plugin (see {@link preparePublicPlugin}): the steps in order. */
export function registerPublicOperation<T>(app: FastifyInstance, deps: AppDeps, op: PublicOperation<T>): void {
  app.post(op.url, { schema: describeOperation(op) }, async (request: FastifyRequest, reply: FastifyReply) => {
    const rawBody = (request.body as Buffer | undefined) ?? EMPTY;
    const input = {
      rawBody,
      contentType: request.sentContentType,
      apiKey: firstHeader(request, 'service-api-key'),
      params: (request.params ?? {}) as Record<string, string>,
    };
    const admitted = await admit(op, input, (key) => deps.auth.authenticate(key));
    if (isAnswer(admitted)) return send(reply, admitted);
    const { auth } = admitted;
    const idem = await idempotencyStep(deps, op, request, auth.companyId, rawBody);
    if (isAnswer(idem)) return send(reply, idem);
    const limited = await rateLimitStep(deps, op, request, reply, auth.companyId, idem.key);
    if (limited) return send(reply, limited);
    const body = storableBody(rawBody, admitted.body);
    return send(reply, await operationStep({ deps, auth, body, path: admitted.path, request, idempotencyKey: idem.key }, op));
  });
}
