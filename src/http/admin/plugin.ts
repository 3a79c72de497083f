/**
 * The operator API (docs/operator-api.md): everything under /admin, bearer ADMIN_TOKEN, JSON in and out.
 * Routes are typed from TypeBox schemas (see components.ts for how to write one), one file per resource
 * (companies.ts, api-keys.ts, contacts.ts, automations.ts, campaigns.ts, batches.ts ...). Every 422 of the
 * operator API has one shape, FastAPI's list (`{"detail":[{type, loc, msg, input?}]}`):
 * schema errors, malformed JSON, handler checks (`invalidInput`) and a domain `DomainError(422, msg)`
 * (one item, `loc: ["body"]`). 401, 404 and 409 stay `{"detail": "..."}`.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyError, FastifyInstance, FastifySchemaCompiler } from 'fastify';
import { storable } from '../../domain/storable.ts';
import type { AppDeps } from '../deps.ts';
import { DomainError } from '../../domain/errors.ts';
import { sendDetail } from '../errors.ts';
import { strictValidators } from '../strict-validators.ts';
import { addComponents, sharedComponents } from './components.ts';
import { registerAuditRoutes } from './audit.ts';
import { registerAutomationRoutes } from './automations.ts';
import { AdminValidationError } from './errors.ts';
import { registerBatchRoutes } from './batches.ts';
import { registerCampaignRoutes } from './campaigns.ts';
import { registerCompanyRoutes } from './companies.ts';
import { registerContactImportRoutes } from './contact-imports.ts';
import { registerContactRoutes } from './contacts.ts';
import { registerConsentRoutes } from './consent.ts';
import { registerEventEndpointRoutes } from './event-endpoints.ts';
import { registerKeyRoutes } from './api-keys.ts';
import { registerSegmentRoutes } from './segments.ts';
import { registerOverviewRoutes } from './overview.ts';
import { registerRateCardRoutes } from './rate-card.ts';
import { registerUserRoutes } from './users.ts';
import { registerWhatsappTemplateRoutes } from './whatsapp-templates.ts';

const digest = (s: string) => createHash('sha256').update(s).digest();

/** FastAPI's names of the parts of a request, by Fastify's validation context. */
const LOCATIONS: Record<string, string> = { body: 'body', params: 'path', querystring: 'query', headers: 'header' };

/** Maps one Ajv error to a FastAPI-style validation item (`loc` starts with body / path / query / header). */
function toDetailItem(e: { keyword: string; instancePath: string; message?: string; params: Record<string, unknown>; data?: unknown }, context: string) {
  const loc: (string | number)[] = [LOCATIONS[context] ?? context];
  for (const part of e.instancePath.split('/').slice(1)) loc.push(/^\d+$/.test(part) ? Number(part) : part.replace(/~1/g, '/').replace(/~0/g, '~'));
  if (e.keyword === 'required') {
    loc.push(String(e.params.missingProperty));
    return { type: 'missing', loc, msg: 'Field required' };
  }
  // An unknown property of an `additionalProperties: false` object: `loc` names it (FastAPI's extra_forbidden).
  if (e.keyword === 'additionalProperties' && typeof e.params.additionalProperty === 'string') {
    loc.push(e.params.additionalProperty);
    return { type: 'additionalProperties', loc, msg: 'must NOT have additional properties' };
  }
  return { type: e.keyword, loc, msg: e.message ?? 'Invalid value' };
}

/**
 * The 415 of a body in another media type than the operation's (`consumes`, else JSON), answered
 * `{"detail": "Unsupported Media Type: send application/json"}` by the app's error handler.
 */
function unsupportedMediaType(consumes: unknown): Error & { statusCode: number; code: string } {
  const accepted = Array.isArray(consumes) && consumes.length > 0 ? consumes.join(' or ') : 'application/json';
  return Object.assign(new Error(`Unsupported Media Type: send ${accepted}`), { statusCode: 415, code: 'FST_ERR_CTP_INVALID_MEDIA_TYPE' });
}

/** Registers the operator API, its bearer check and its error shapes. */
export async function adminPlugin(app: FastifyInstance, deps: AppDeps): Promise<void> {
  const expected = digest(deps.adminToken);
  app.addHook('onRequest', async (request, reply) => {
    const header = request.headers.authorization ?? '';
    const match = /^Bearer\s+(.+)$/i.exec(header);
    if (!match) return sendDetail(reply, 401, 'Not authenticated', { 'WWW-Authenticate': 'Bearer' });
    if (!timingSafeEqual(digest(match[1].trim()), expected)) return sendDetail(reply, 401, 'Invalid admin token', { 'WWW-Authenticate': 'Bearer' });
  });
  // Strings with U+0000 or lone surrogates are valid JSON but cannot be stored: replace them first.
  app.addHook('preValidation', async (request) => {
    if (request.body !== undefined) request.body = storable(request.body);
  });
  addComponents(app, sharedComponents);
  // Bodies, path and query held strictly to the documented schemas: no type coercion, no removal of
  // unknown properties (src/http/strict-validators.ts; docs/operator-api.md "Conventions").
  app.setValidatorCompiler(strictValidators(deps.compiledSchemas, () => app.getSchemas()) as FastifySchemaCompiler<unknown>);
  // Bodies are JSON (and the CSV import's text/csv, contacts.ts): any other Content-Type on an
  // operation that takes a body is 415 (documented on each by openapi-schemas.ts); an operation
  // without a body ignores one, whatever its type (as it ignores an empty JSON body, below).
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (request, _body, done) => {
    if (request.routeOptions.schema?.body === undefined) return done(null, undefined);
    done(unsupportedMediaType(request.routeOptions.schema.consumes));
  });
  // An empty body with `Content-Type: application/json` is no body: a DELETE
  // or any route without a body answers as without the header; a route that needs a body says so as it
  // would without one (422). Anything else is Fastify's own JSON parsing (prototype poisoning refused).
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    if (body === '') return done(null, undefined);
    const consumes = request.routeOptions.schema?.consumes;
    if (Array.isArray(consumes) && !consumes.includes('application/json')) return done(unsupportedMediaType(consumes));
    parseJson(request, body as string, done);
  });
  app.setSchemaErrorFormatter((errors, context) => new AdminValidationError(errors.map((e) => toDetailItem(e, context))));
  app.setErrorHandler((err: FastifyError, _request, reply) => {
    if (err instanceof AdminValidationError) return reply.code(422).send({ detail: err.items });
    // A domain rule refused the request (e.g. a private webhook URL): one item of the admin shape.
    if (err instanceof DomainError && err.status === 422) return reply.code(422).send({ detail: [{ type: 'value_error', loc: ['body'], msg: err.detail }] });
    if (err.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || err.statusCode === 400) {
      return reply.code(422).send({ detail: [{ type: 'json_invalid', loc: ['body'], msg: 'JSON decode error' }] });
    }
    throw err;
  });
  registerCompanyRoutes(app, deps);
  registerKeyRoutes(app, deps);
  registerContactRoutes(app, deps);
  registerContactImportRoutes(app, deps);
  registerAutomationRoutes(app, deps);
  registerCampaignRoutes(app, deps);
  registerBatchRoutes(app, deps);
  registerAuditRoutes(app, deps);
  registerUserRoutes(app, deps);
  registerEventEndpointRoutes(app, deps);
  registerSegmentRoutes(app, deps);
  registerOverviewRoutes(app, deps);
  registerWhatsappTemplateRoutes(app, deps);
  registerConsentRoutes(app, deps);
  registerRateCardRoutes(app, deps);
}
