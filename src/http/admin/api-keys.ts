/** Operator API: company API keys (operator-api.md; api.md part 5). The key is shown only at creation. */
import type { FastifyInstance } from 'fastify';
import { createApiKey, revokeApiKey } from '../../domain/api-keys.ts';
import { isRowId, notFound } from '../../domain/errors.ts';
import { recordAudit } from '../../domain/audit.ts';
import type { AppDeps } from '../deps.ts';
import { idParam } from './schemas.ts';

export function registerKeyRoutes(app: FastifyInstance, deps: AppDeps): void {
  const db = deps.database.db;
  const tags = ['operator: api keys'];

  app.post<{ Params: { company_id: number }; Body: { label?: string } | undefined }>('/admin/companies/:company_id/api-keys', {
    schema: {
      tags, summary: 'Issue an API key (shown only in this answer)', params: idParam('company_id'),
      body: { type: ['object', 'null'], properties: { label: { type: 'string', maxLength: 255 } } },
    },
  }, async (request, reply) => {
    const key = await createApiKey(db, request.params.company_id, request.body?.label ?? null);
    await recordAudit(db, { actor: 'admin', action: 'key.create', target: `key:${key.key_id}`, company_id: request.params.company_id, details: { label: key.label, prefix: key.prefix } });
    return reply.code(201).send({ key_id: key.key_id, api_key: key.api_key, label: key.label, prefix: key.prefix, created_at: key.created_at });
  });

  app.get<{ Params: { company_id: number } }>('/admin/companies/:company_id/api-keys', {
    schema: { tags, summary: 'List the API keys of a company (never the keys themselves)', params: idParam('company_id') },
  }, async (request) => {
    const keys = await db.selectFrom('api_keys')
      .select(['key_id', 'label', 'prefix', 'created_at', 'last_used_at', 'revoked_at'])
      .where('company_id', '=', request.params.company_id).orderBy('key_id').execute();
    return { keys };
  });

  app.delete<{ Params: { key_id: number } }>('/admin/api-keys/:key_id', {
    schema: { tags, summary: 'Revoke an API key', params: idParam('key_id') },
  }, async (request, reply) => {
    if (!isRowId(request.params.key_id)) throw notFound('API key not found');
    const revoked = await revokeApiKey(db, request.params.key_id);
    if (!revoked) throw notFound('API key not found');
    deps.auth.invalidate();
    await recordAudit(db, { actor: 'admin', action: 'key.revoke', target: `key:${request.params.key_id}`, company_id: revoked.company_id });
    return reply.code(204).send();
  });
}
