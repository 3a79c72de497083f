/**
 * The request pipeline of the four public operations, in the order decisions.md §1 fixes:
 * routing (Fastify) → body size (413) and parsing (400 / 422 json_invalid) → authentication (401) →
 * subscription (403, 4.2 only) → validation of path and body (422) → rate limit (429) → the operation.
 * Each operation is declared once (model, limit, handler, docs) and registered through this module.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Transaction } from 'kysely';
import type { DB } from '../db/schema.ts';
import type { AuthContext } from '../domain/api-keys.ts';
import { claimKey, completeKey, isValidIdempotencyKey, releaseKey, requestHash } from '../domain/idempotency.ts';
import { DomainError } from '../domain/errors.ts';
import { storable } from '../domain/storable.ts';
import { rateLimitRefusals } from '../metrics.ts';
import type { AppDeps } from './deps.ts';
import { sendDetail, sendJsonText } from './errors.ts';
import { rateLimitHeaders, type RateLimitRule } from './rate-limit.ts';
import { jsonSchemaOf, parseBody, renderValidationError, validateRequest, type Model } from './validation/index.ts';
import { errorSchemas } from './openapi-schemas.ts';

export interface OperationContext<T> {
  readonly deps: AppDeps;
  readonly auth: AuthContext;
  readonly body: T;
  readonly path: Record<string, number | bigint>;
  readonly request: FastifyRequest;
  /**
   * Records the 200 answer under the request's Idempotency-Key inside the caller's transaction, so the
   * answer and what it reports commit together. Undefined without the header: the accept transaction
   * then has no step of the request's own and can be sent pipelined (domain/accept-writer.ts).
   */
  readonly recordAnswer: ((trx: Transaction<DB>, answer: unknown) => Promise<void>) | undefined;
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
  /** Honours the optional Idempotency-Key header (4.3 and 4.4; issue 5 item 5). */
  readonly idempotent?: boolean;
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

/** Registers one public operation on the (raw-body) public plugin. */
export function registerPublicOperation<T>(app: FastifyInstance, deps: AppDeps, op: PublicOperation<T>): void {
  const responses: Record<string, object> = {
    200: { description: 'Successful Response', ...op.successSchema },
    401: { description: 'Missing or invalid service-api-key', ...errorSchemas.detail },
    400: { description: 'The body cannot be parsed (invalid UTF-8, nesting deeper than 512, a number over 4300 digits)', ...errorSchemas.detail },
    413: { description: 'Request body larger than 1 MiB', ...errorSchemas.detail },
    422: { description: 'Validation Error', ...errorSchemas.validation },
    429: { description: `Rate limit exceeded (${op.rule.text})`, ...errorSchemas.rateLimit },
  };
  for (const [status, text] of Object.entries(op.errors)) {
    responses[status] = { description: status === '400' ? `${text}; or the body cannot be parsed` : text, ...errorSchemas.detail };
  }
  if (op.idempotent) {
    responses[400] = { ...(responses[400] as object), description: `${(responses[400] as { description: string }).description}; or a malformed Idempotency-Key` };
    responses[409] = { description: 'A request with the same Idempotency-Key is still being processed', ...errorSchemas.detail };
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
          type: 'string', minLength: 1, maxLength: 255,
          description: 'Optional. The same key with the same body within 24 hours returns the first answer (with header Idempotent-Replayed: true) and creates nothing new; with a different body: 422; while the first request is in flight: 409. Keys are scoped per company.',
        },
      },
    }
    : undefined;
  const params = op.pathParams?.length
    ? { type: 'object', properties: Object.fromEntries(op.pathParams.map((p) => [p, { type: 'integer', title: p.replace(/_/g, ' ').replace(/\b\w/g, (c) => c.toUpperCase()) }])), required: [...op.pathParams] }
    : undefined;

  app.post(op.url, {
    schema: {
      operationId: op.operationId,
      summary: op.summary,
      description: op.description,
      tags: ['public'],
      security: [{ APIKeyHeader: [] }],
      ...(params ? { params } : {}),
      ...(headers ? { headers } : {}),
      body: jsonSchemaOf(op.model as Model<unknown>),
      response: responses,
    },
  }, async (request: FastifyRequest, reply: FastifyReply) => {
    const rawBody = (request.body as Buffer | undefined) ?? EMPTY;
    const body = parseBody(rawBody, (request as { sentContentType?: string }).sentContentType);
    if (body.kind === 'unparseable') return sendDetail(reply, 400, 'There was an error parsing the body');
    if (body.kind === 'invalid') return sendJsonText(reply, 422, renderValidationError(body.errors));

    const authn = await deps.auth.authenticate(firstHeader(request, 'service-api-key'));
    if (!authn.ok) {
      return sendDetail(reply, 401, authn.detail, authn.detail === 'Not authenticated' ? { 'WWW-Authenticate': 'APIKey' } : {});
    }
    if (op.requiresSubscription && !authn.auth.subscriptionActive) {
      return sendDetail(reply, 403, 'An active subscription is required');
    }

    const rawParams = (request.params ?? {}) as Record<string, string>;
    const validated = validateRequest(op.model, body, op.pathParams?.map((name) => ({ name, raw: rawParams[name] ?? '' })));
    if (!validated.ok) return sendJsonText(reply, 422, renderValidationError(validated.errors));

    // Idempotency (after validation, before the rate limit: a replay costs the client nothing).
    let idemKey: string | undefined;
    if (op.idempotent && request.headers['idempotency-key'] !== undefined) {
      idemKey = firstHeader(request, 'idempotency-key') ?? '';
      if (!isValidIdempotencyKey(idemKey)) return sendDetail(reply, 400, 'Idempotency-Key must be 1 to 255 visible ASCII characters');
      const claim = await claimKey(deps.database.db, authn.auth.companyId, idemKey,
        requestHash(op.operationId, rawBody), deps.clock.now());
      if (claim.kind === 'mismatch') return sendDetail(reply, 422, 'Idempotency-Key reused with a different request');
      if (claim.kind === 'in_flight') return sendDetail(reply, 409, 'A request with this Idempotency-Key is still being processed', { 'Retry-After': '1' });
      if (claim.kind === 'replay') return sendJsonText(reply.header('Idempotent-Replayed', 'true'), claim.status, claim.body);
    }
    const companyId = authn.auth.companyId;
    let recorded = false;
    const key = idemKey;
    const recordAnswer = key === undefined ? undefined : async (trx: Transaction<DB>, answer: unknown) => {
      await completeKey(trx, companyId, key, 200, JSON.stringify(answer));
      recorded = true;
    };

    const decision = await deps.rateLimiter.consume(`${authn.auth.companyId}:${op.rule.name}`, op.rule, deps.clock.now());
    reply.headers(rateLimitHeaders(op.rule, decision));
    if (!decision.allowed) {
      request.log.info({ company_id: companyId, rule: op.rule.name }, 'rate limit exceeded');
      rateLimitRefusals.inc({ operation: op.rule.name });
      // A refused request leaves nothing to replay: free the key for the client's retry.
      if (idemKey !== undefined) await releaseKey(deps.database.db, companyId, idemKey);
      return sendJsonText(reply, 429, JSON.stringify({ error: `Rate limit exceeded: ${op.rule.text}` }));
    }

    try {
      const result = await op.handle({ deps, auth: authn.auth, body: storableBody(rawBody, validated.body), path: validated.path, request, recordAnswer });
      const text = JSON.stringify(result);
      if (idemKey !== undefined && !recorded) await completeKey(deps.database.db, companyId, idemKey, 200, text);
      return sendJsonText(reply, 200, text);
    } catch (err) {
      if (err instanceof DomainError) {
        const text = JSON.stringify({ detail: err.detail });
        if (idemKey !== undefined) await completeKey(deps.database.db, companyId, idemKey, err.status, text);
        return sendJsonText(reply, err.status, text);
      }
      if (idemKey !== undefined) await releaseKey(deps.database.db, companyId, idemKey).catch(() => {});
      throw err;
    }
  });
}
