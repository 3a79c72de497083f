/**
 * Operator API: company API keys (docs/operator-api.md; docs/api.md "At a glance"). The key itself is answered once, at
 * creation; lists show its display prefix only. The worked example of the admin route pattern
 * (components.ts): components, typed params and bodies, every status with its body and example.
 *
 * | route | answers |
 * |---|---|
 * | POST /admin/companies/{company_id}/api-keys `{label?}` | 201 `CreatedApiKey`; 401; 404 company; 422 |
 * | GET /admin/companies/{company_id}/api-keys | 200 `{keys: ApiKey[]}`; 401; 404 company; 422 |
 * | DELETE /admin/api-keys/{key_id} | 204; 401; 404 key; 422 |
 */
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { OPERATOR } from '../../domain/actor.ts';
import { createApiKey, listApiKeys, revokeApiKey } from '../../domain/api-keys.ts';
import { getCompany } from '../../domain/companies.ts';
import type { AppDeps } from '../deps.ts';
import { addComponents, adminErrors, component, exampleOf, idParams, iso, invalid, noContent, notFound as notFoundAnswer, objectOrNull, ok, ref, TIME_EXAMPLE } from './components.ts';

const label = Type.Union([Type.String({ maxLength: 255 }), Type.Null()], { description: 'a name for people (where the key is used)' });
const prefix = Type.String({ description: 'the first characters of the key, to recognise it', examples: ['cms_live_Xk3q'] });

/** A key as lists show it (never the key itself). */
export const ApiKey = component('ApiKey', Type.Object({
  key_id: Type.Integer(),
  label,
  prefix,
  created_at: Type.String({ format: 'date-time' }),
  last_used_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'last authenticated request (updated at most every few seconds)' }),
  revoked_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
}), { key_id: 7, label: 'shop backend', prefix: 'cms_live_Xk3q', created_at: TIME_EXAMPLE, last_used_at: null, revoked_at: null });

/** The answer of a key's creation: the key, shown this once. */
export const CreatedApiKey = component('CreatedApiKey', Type.Object({
  key_id: Type.Integer(),
  api_key: Type.String({ description: 'the key, for the `service-api-key` header: shown only in this answer, store it now' }),
  label,
  prefix,
  created_at: Type.String({ format: 'date-time' }),
}), { key_id: 7, api_key: 'cms_live_Xk3qP2v9Lr8sT1wZ0aBcDeFgHiJkLmNo', label: 'shop backend', prefix: 'cms_live_Xk3q', created_at: TIME_EXAMPLE });

const companyParams = idParams('company_id', 'the company', 12);

/** Registers the routes of the module comment. */
export function registerKeyRoutes(app: FastifyInstance, deps: AppDeps): void {
  const db = deps.database.db;
  const tags = ['operator: api keys'];
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  addComponents(app, [ApiKey, CreatedApiKey]);

  r.post('/admin/companies/:company_id/api-keys', {
    schema: {
      tags, operationId: 'create_api_key', summary: 'Issue an API key (shown only in this answer)',
      params: companyParams,
      body: objectOrNull(Type.Object({
        label: Type.Optional(Type.String({ maxLength: 255, description: 'a name for people' })),
      }, { examples: [{ label: 'shop backend' }] })),
      response: {
        201: ok('The new key (its `api_key` is never shown again)', ref(CreatedApiKey), exampleOf(CreatedApiKey)),
        ...adminErrors,
        404: notFoundAnswer('Company not found'),
        422: invalid({ type: 'maxLength', loc: ['body', 'label'], msg: 'must NOT have more than 255 characters' }),
      },
    },
  }, async (request, reply) => {
    const key = await createApiKey(db, OPERATOR, request.params.company_id, request.body?.label ?? null); // audited as key.create
    return reply.code(201).send({ key_id: key.key_id, api_key: key.api_key, label: key.label, prefix: key.prefix, created_at: iso(key.created_at) });
  });

  r.get('/admin/companies/:company_id/api-keys', {
    schema: {
      tags, operationId: 'list_api_keys', summary: 'List the API keys of a company (never the keys themselves)',
      params: companyParams,
      response: {
        200: ok('The keys, oldest first, revoked ones included', Type.Object({ keys: Type.Array(ref(ApiKey)) }), { keys: [exampleOf(ApiKey)] }),
        ...adminErrors,
        404: notFoundAnswer('Company not found'),
        422: invalid({ type: 'type', loc: ['path', 'company_id'], msg: 'must be integer' }),
      },
    },
  }, async (request) => {
    const company = await getCompany(db, request.params.company_id);
    const keys = await listApiKeys(db, company.company_id);
    return { keys: keys.map((k) => ({ ...k, created_at: iso(k.created_at), last_used_at: iso(k.last_used_at), revoked_at: iso(k.revoked_at) })) };
  });

  r.delete('/admin/api-keys/:key_id', {
    schema: {
      tags, operationId: 'revoke_api_key', summary: 'Revoke an API key (at once in this process, within 2 s in others)',
      params: idParams('key_id', 'the key', 7),
      response: {
        204: noContent('Revoked (revoking a revoked key again is 204 too)'),
        ...adminErrors,
        404: notFoundAnswer('API key not found'),
        422: invalid({ type: 'type', loc: ['path', 'key_id'], msg: 'must be integer' }),
      },
    },
  }, async (request, reply) => {
    await revokeApiKey(db, deps.auth, OPERATOR, request.params.key_id); // 404 unknown; audited as key.revoke
    return reply.code(204).send();
  });
}
