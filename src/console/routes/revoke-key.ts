/**
 * Revoking an API key with confirmation:
 * GET /console/settings/integrations/credentials/:keyId/revoke asks; POST there revokes (revokeApiKey
 * drops this process's authentication cache after its write, so the key is refused at once here and
 * within the cache lifetime elsewhere), and returns to the list. Unknown, revoked or another
 * company's key ids answer 404.
 */
import type { FastifyInstance } from 'fastify';
import { consoleActor } from '../../domain/actor.ts';
import { revokeApiKey } from '../../domain/api-keys.ts';
import { notFound } from '../../domain/errors.ts';
import type { AppDeps } from '../../http/deps.ts';
import { parseId, sendPage, sessionOf } from '../context.ts';
import { findActiveCompanyKey } from '../queries/keys.ts';
import { CREDENTIALS_CRUMBS } from '../views/credentials.ts';
import { BASE } from '../views/layout.ts';
import { revokeView } from '../views/revoke-key.ts';

/** Registers GET and POST /settings/integrations/credentials/:keyId/revoke (signed-in scope). */
export function registerRevokeKeyPage(scope: FastifyInstance, deps: AppDeps): void {
  const db = deps.database.db;
  const path = '/settings/integrations/credentials/:keyId/revoke';

  scope.get<{ Params: { keyId: string } }>(path, async (request, reply) => {
    const key = await findActiveCompanyKey(db, sessionOf(request).company_id, parseId(request.params.keyId));
    if (!key) throw notFound('API key not found');
    return sendPage(request, reply, 200, {
      title: 'Revoke API key', section: 'credentials', crumbs: [...CREDENTIALS_CRUMBS, ['Revoke key']],
      body: (csrf) => revokeView({ csrf, key }),
    });
  });

  scope.post<{ Params: { keyId: string } }>(path, async (request, reply) => {
    const session = sessionOf(request);
    const key = await findActiveCompanyKey(db, session.company_id, parseId(request.params.keyId));
    if (!key) throw notFound('API key not found');
    await revokeApiKey(db, deps.auth, consoleActor(session), key.key_id); // audited as key.revoke
    request.log.info({ audit: true, action: 'key.revoke', key_id: key.key_id, via: 'console' }, 'api key revoked');
    return reply.redirect(`${BASE}/settings/integrations/credentials?done=revoked`, 303);
  });
}
