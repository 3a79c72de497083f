/**
 * Settings › Integrations & developers › Credentials (api.md part 5; issue 6 item 2):
 * GET lists the company's API keys (label, prefix, created, last used) and shows the subscription
 * state, whether the push-messaging connector is connected and the channel in use (its provider only,
 * never its settings or secrets). POST creates a key with an optional label and shows it once, with a
 * copy button; the answer is not cached and the key is never stored or shown again.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { createApiKey, type CreatedKey } from '../../domain/api-keys.ts';
import { recordAudit } from '../../domain/audit.ts';
import { getCompany } from '../../domain/companies.ts';
import type { AppDeps } from '../../http/deps.ts';
import { field, sendPage, sessionOf } from '../context.ts';
import { listCompanyKeys } from '../queries/keys.ts';
import { credentialsView, CREDENTIALS_CRUMBS } from '../views/credentials.ts';

/** Fixed notices other pages may ask this page to show (`?done=`). */
const NOTICES: Record<string, string> = { revoked: 'The API key was revoked. Requests with it are refused from now on.' };

/** Longest key label, as in the operator API. */
const LABEL_MAX = 255;

/** Registers GET and POST /settings/integrations/credentials (signed-in scope). */
export function registerCredentialsPage(scope: FastifyInstance, deps: AppDeps): void {
  const db = deps.database.db;
  const path = '/settings/integrations/credentials';

  async function show(request: FastifyRequest, reply: FastifyReply, status: number, extra: { created?: CreatedKey; error?: string; label?: string; flash?: string }) {
    const session = sessionOf(request);
    const [company, keys] = await Promise.all([getCompany(db, session.company_id), listCompanyKeys(db, session.company_id)]);
    return sendPage(request, reply, status, {
      title: 'Credentials', section: 'credentials', crumbs: CREDENTIALS_CRUMBS, flash: extra.flash,
      body: (csrf) => credentialsView({ csrf, company, keys, created: extra.created, error: extra.error, label: extra.label ?? '' }),
    });
  }

  scope.get<{ Querystring: { done?: string } }>(path, async (request, reply) =>
    show(request, reply, 200, { flash: NOTICES[String(request.query.done ?? '')] }));

  scope.post(path, async (request, reply) => {
    const session = sessionOf(request);
    const label = field(request.body, 'label').trim();
    if ([...label].length > LABEL_MAX) return show(request, reply, 400, { error: `The label can have at most ${LABEL_MAX} characters.`, label });
    const created = await createApiKey(db, session.company_id, label === '' ? null : label);
    await recordAudit(db, { actor: `console:${session.email}`, action: 'key.create', target: `key:${created.key_id}`, company_id: session.company_id, details: { label: created.label, prefix: created.prefix } });
    request.log.info({ audit: true, action: 'key.create', key_id: created.key_id, via: 'console' }, 'api key created');
    return show(request, reply, 201, { created });
  });
}
