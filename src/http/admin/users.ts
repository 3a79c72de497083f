/**
 * Operator API: console users (issue 6 item 1).
 *
 * - `POST /admin/companies/{company_id}/users/invitations {email}` → 201
 *   `{invitation_id, email, company_id, invite_url, expires_at}`. `invite_url` is the one-time link
 *   (`<scheme>://<host>/console/invite/<token>`, built from the request's host), valid 7 days; only its
 *   hash is stored, so it is shown only here. A newer invitation for the same email replaces older
 *   ones. 404 unknown company; 409 a console user with that email exists; 422 not an email address.
 * - `GET /admin/companies/{company_id}/users` → 200 `{users: [{user_id, email, created_at}],
 *   invitations: [{invitation_id, email, created_at, expires_at}]}` (pending invitations only).
 */
import type { FastifyInstance } from 'fastify';
import { getCompany } from '../../domain/companies.ts';
import { DomainError } from '../../domain/errors.ts';
import { createInvitation, EMAIL_MAX, listCompanyUsers } from '../../domain/users.ts';
import type { AppDeps } from '../deps.ts';
import { detailResponse, idParam } from './schemas.ts';

/** Registers the console-user routes of the operator API. */
export function registerUserRoutes(app: FastifyInstance, deps: AppDeps): void {
  const db = deps.database.db;
  const tags = ['operator: console users'];

  app.post<{ Params: { company_id: number }; Body: { email: string } }>('/admin/companies/:company_id/users/invitations', {
    schema: {
      tags,
      summary: 'Invite a person to the company console (one-time link, shown only in this answer)',
      params: idParam('company_id'),
      body: {
        type: 'object', required: ['email'],
        properties: { email: { type: 'string', minLength: 3, maxLength: EMAIL_MAX } },
      },
      response: {
        201: {
          type: 'object',
          required: ['invitation_id', 'email', 'company_id', 'invite_url', 'expires_at'],
          properties: {
            invitation_id: { type: 'integer' }, email: { type: 'string' }, company_id: { type: 'integer' },
            invite_url: { type: 'string' }, expires_at: { type: 'string', format: 'date-time' },
          },
        },
        404: detailResponse, 409: detailResponse,
      },
    },
  }, async (request, reply) => {
    let inv;
    try {
      inv = await createInvitation(db, request.params.company_id, { email: request.body.email, role: 'owner', actor: 'admin' }, new Date(deps.clock.now()));
    } catch (err) {
      if (err instanceof DomainError && err.status === 422) {
        return reply.code(422).send({ detail: [{ type: 'value_error', loc: ['body', 'email'], msg: 'value is not a valid email address', input: request.body.email }] });
      }
      throw err;
    }
    request.log.info({ audit: true, action: 'user.invite', invitation_id: inv.invitation_id }, 'console invitation created');
    const inviteUrl = `${request.protocol}://${request.host}/console/invite/${inv.token}`;
    return reply.code(201).send({ invitation_id: inv.invitation_id, email: inv.email, company_id: inv.company_id, invite_url: inviteUrl, expires_at: inv.expires_at.toISOString() });
  });

  app.get<{ Params: { company_id: number } }>('/admin/companies/:company_id/users', {
    schema: { tags, summary: 'List the console users and pending invitations of a company', params: idParam('company_id') },
  }, async (request) => {
    await getCompany(db, request.params.company_id); // 404 for an unknown company
    return listCompanyUsers(db, request.params.company_id, new Date(deps.clock.now()));
  });
}
