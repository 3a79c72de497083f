/**
 * Operator API: the audit log, newest first (components.ts pattern).
 * GET /admin/audit?company_id&limit → 200 `{entries: AuditEntry[]}`; 401; 422 (bad query).
 */
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { listAudit } from '../../domain/audit.ts';
import type { AppDeps } from '../deps.ts';
import { addComponents, adminErrors, component, exampleOf, freeObject, invalid, iso, ok, ref, rowId, TIME_EXAMPLE } from './components.ts';

/** One operator action. */
export const AuditEntry = component('AuditEntry', Type.Object({
  entry_id: Type.Integer(),
  at: Type.String({ format: 'date-time' }),
  actor: Type.String({ description: '`admin` (the operator token) or `console:<email>`' }),
  action: Type.String({ description: 'what was done, e.g. company.create, key.revoke, channel.set' }),
  target: Type.String({ description: 'what it was done to, e.g. company:12, key:7' }),
  company_id: Type.Union([Type.Integer(), Type.Null()]),
  details: freeObject({ description: 'the action\'s fields (never secrets)' }),
}), { entry_id: 311, at: TIME_EXAMPLE, actor: 'admin', action: 'key.create', target: 'key:7', company_id: 12, details: { label: 'shop backend', prefix: 'cms_live_Xk3q' } });

/** Registers GET /admin/audit. */
export function registerAuditRoutes(app: FastifyInstance, deps: AppDeps): void {
  addComponents(app, [AuditEntry]);
  app.withTypeProvider<TypeBoxTypeProvider>().get('/admin/audit', {
    schema: {
      tags: ['operator: audit'], operationId: 'list_audit', summary: 'Operator actions: who, what, when (newest first)',
      querystring: Type.Object({
        company_id: Type.Optional(rowId('only this company\'s entries', 12)),
        limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 100, description: 'at most this many entries', examples: [50] })),
      }),
      response: {
        200: ok('The entries, newest first', Type.Object({ entries: Type.Array(ref(AuditEntry)) }), { entries: [exampleOf(AuditEntry)] }),
        ...adminErrors,
        422: invalid({ type: 'maximum', loc: ['query', 'limit'], msg: 'must be <= 1000' }),
      },
    },
  }, async (request) => ({
    entries: (await listAudit(deps.database.db, { companyId: request.query.company_id, limit: request.query.limit })).map((e) => ({ ...e, at: iso(e.at) })),
  }));
}
