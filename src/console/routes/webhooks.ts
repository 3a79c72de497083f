/**
 * Settings › Integrations & developers › Webhooks (docs/events.md), list page:
 * GET shows the signed-in company's event endpoints and the add form; POST adds one (URL checked by
 * the network guard, event types among EVENT_TYPES, at most 20), then POST-redirect-GET: 303 to the new
 * endpoint's page (`?done=added`), where the signing secret can be revealed; or the form again with
 * the reason (422 / 409). Only the session's company is ever read or changed.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { consoleActor } from '../../domain/actor.ts';
import { DomainError } from '../../domain/errors.ts';
import { createEndpoint, listEndpoints } from '../../domain/event-endpoints.ts';
import type { AppDeps } from '../../http/deps.ts';
import { field, sendPage, sessionOf } from '../context.ts';
import { webhooksView, WEBHOOKS_CRUMBS, WEBHOOKS_PATH, type EndpointForm } from '../views/webhooks.ts';

/** Fixed notices other pages ask this one to show (`?done=`). */
const NOTICES: Record<string, string> = { removed: 'The webhook endpoint was removed.' };

/** The endpoint fields of a parsed form (`events` may repeat). */
export function endpointForm(body: unknown): EndpointForm {
  const raw = (body as Record<string, unknown> | undefined)?.events;
  const events = (Array.isArray(raw) ? raw : raw === undefined ? [] : [raw]).filter((x): x is string => typeof x === 'string');
  return { url: field(body, 'url').trim(), description: field(body, 'description').trim(), events };
}

/** Registers GET and POST /settings/integrations/webhooks (signed-in scope). */
export function registerWebhooksPage(scope: FastifyInstance, deps: AppDeps): void {
  const db = deps.database.db;
  const path = '/settings/integrations/webhooks';

  async function show(request: FastifyRequest, reply: FastifyReply, status: number, extra: { error?: string; form?: EndpointForm; flash?: string }) {
    const session = sessionOf(request);
    const endpoints = await listEndpoints(db, session.company_id);
    return sendPage(request, reply, status, {
      title: 'Webhooks', section: 'webhooks', crumbs: WEBHOOKS_CRUMBS, flash: extra.flash,
      body: (csrf) => webhooksView({ csrf, endpoints, error: extra.error, form: extra.form ?? { url: '', description: '', events: [] } }),
    });
  }

  scope.get<{ Querystring: { done?: string } }>(path, async (request, reply) =>
    show(request, reply, 200, { flash: NOTICES[String(request.query.done ?? '')] }));

  scope.post(path, async (request, reply) => {
    const session = sessionOf(request);
    const form = endpointForm(request.body);
    if (form.url === '') return show(request, reply, 422, { error: 'Enter the URL that should receive the events.', form });
    if ([...form.description].length > 500) return show(request, reply, 422, { error: 'The description can have at most 500 characters.', form });
    try {
      const created = await createEndpoint(db, deps, consoleActor(session), session.company_id, {
        url: form.url, events: form.events.length ? form.events : undefined, description: form.description === '' ? null : form.description,
      }, { auditDetails: (e) => ({ url: e.url, events: e.events }) });
      return reply.header('cache-control', 'no-store').redirect(`${WEBHOOKS_PATH}/${created.endpoint_id}?done=added`, 303);
    } catch (err) {
      if (err instanceof DomainError && (err.status === 422 || err.status === 409)) return show(request, reply, err.status, { error: `Not added: ${err.detail}.`, form });
      throw err;
    }
  });
}
