/**
 * One webhook endpoint of the signed-in company (docs/events.md), under
 * /settings/integrations/webhooks/:endpointId:
 *
 * - GET            settings form, actions and the attempt log (status code, time, duration, response excerpt)
 * - POST           save URL, description, events (POST-redirect-GET to `?done=saved`; the form again on 422)
 * - POST /enabled  enable or disable (`enabled=true|false`)
 * - POST /reveal   show the signing secret: the one POST answered with a page (200) rather than a
 *                  redirect, since it changes nothing (but the audit log) and the secret must not
 *                  travel in a URL or cookie; the answer is never cached
 * - POST /rotate   replace the signing secret (`?done=rotated`; reveal shows the new one)
 * - POST /test     send one signed test event now (`?test=ok|failed&status=&ms=&error=` shows the outcome)
 * - POST /resend   `event_id`: queue that event again for this company's endpoints (`?done=resent`)
 * - GET/POST /remove  confirmation, then removal (to the list, `?done=removed`)
 *
 * Another company's endpoint or event id answers 404 exactly like an unknown one.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { selectAttempts } from '../../db/events.ts';
import { consoleActor } from '../../domain/actor.ts';
import { DomainError } from '../../domain/errors.ts';
import {
  endpointView, EVENT_TYPES, findEndpointFor, removeEndpoint, resendEvent, revealEndpointSecret, rotateEndpointSecret, testEndpoint, updateEndpoint,
  type EndpointView,
} from '../../domain/event-endpoints.ts';
import type { AppDeps } from '../../http/deps.ts';
import { sendTestEvent } from '../../queue/events/test-event.ts';
import { field, parseId, sendPage, sessionOf } from '../context.ts';
import { removeWebhookView, webhookView, WEBHOOKS_CRUMBS, WEBHOOKS_PATH, type EndpointForm, type WebhookViewModel } from '../views/webhooks.ts';
import { endpointForm } from './webhooks.ts';

/** Attempts shown on the page. */
const ATTEMPTS_SHOWN = 100;

const NOTICES: Record<string, string> = {
  added: 'The endpoint was added. Reveal its signing secret below to verify the requests it receives.',
  rotated: 'The signing secret was replaced; requests are signed with the new one from now on. Reveal it below.',
  saved: 'The endpoint was saved.',
  enabled: 'The endpoint is enabled: events are sent to it again.',
  disabled: 'The endpoint is disabled: no events are sent to it.',
  resent: 'The event is queued to be sent again.',
};

type Params = { Params: { endpointId: string } };

/** Registers the endpoint page and its actions (signed-in scope). */
export function registerWebhookPage(scope: FastifyInstance, deps: AppDeps): void {
  const db = deps.database.db;
  const path = '/settings/integrations/webhooks/:endpointId';

  async function mine(request: FastifyRequest<Params>) {
    const session = sessionOf(request);
    const row = await findEndpointFor(db, consoleActor(session), parseId(request.params.endpointId));
    return { session, row };
  }

  async function show(request: FastifyRequest<Params>, reply: FastifyReply, status: number, endpoint: EndpointView, extra: Partial<Omit<WebhookViewModel, 'csrf' | 'endpoint' | 'attempts'>> & { flash?: string } = {}) {
    const attempts = await selectAttempts(db, endpoint.endpoint_id, ATTEMPTS_SHOWN);
    const form: EndpointForm = extra.form ?? { url: endpoint.url, description: endpoint.description ?? '', events: endpoint.events };
    return sendPage(request, reply, status, {
      title: 'Webhook endpoint', section: 'webhooks', crumbs: [...WEBHOOKS_CRUMBS, ['Endpoint']], flash: extra.flash,
      body: (csrf) => webhookView({ csrf, endpoint, attempts, form, secret: extra.secret, error: extra.error, test: extra.test }),
    });
  }

  scope.get<Params & { Querystring: Record<string, string | undefined> }>(path, async (request, reply) => {
    const { row } = await mine(request);
    const q = request.query;
    const number = (v: string | undefined) => (v !== undefined && /^\d{1,9}$/.test(v) ? Number(v) : null);
    const test = q.test === 'ok' || q.test === 'failed'
      ? { ok: q.test === 'ok', status_code: number(q.status), duration_ms: number(q.ms), error: q.test === 'failed' ? (q.error ?? 'not delivered').slice(0, 200) : null }
      : undefined;
    return show(request, reply, 200, endpointView(row), { flash: NOTICES[String(q.done ?? '')], test });
  });

  scope.post<Params>(path, async (request, reply) => {
    const { session, row } = await mine(request);
    const form = endpointForm(request.body);
    if (form.url === '') return show(request, reply, 422, endpointView(row), { error: 'Enter the URL that should receive the events.', form });
    if ([...form.description].length > 500) return show(request, reply, 422, endpointView(row), { error: 'The description can have at most 500 characters.', form });
    try {
      // No type ticked: all of them (as on creation).
      const events = form.events.length ? form.events : [...EVENT_TYPES];
      await updateEndpoint(db, deps, consoleActor(session), row.endpoint_id, { url: form.url, description: form.description === '' ? null : form.description, events }, {
        auditDetails: () => ({ url: form.url, events: form.events.length ? form.events : 'all' }),
      });
      return reply.redirect(`${WEBHOOKS_PATH}/${row.endpoint_id}?done=saved`, 303);
    } catch (err) {
      if (err instanceof DomainError && err.status === 422) return show(request, reply, 422, endpointView(row), { error: `Not saved: ${err.detail}.`, form });
      throw err;
    }
  });

  scope.post<Params>(`${path}/enabled`, async (request, reply) => {
    const { session, row } = await mine(request);
    const enabled = field(request.body, 'enabled') === 'true';
    await updateEndpoint(db, deps, consoleActor(session), row.endpoint_id, { enabled }); // audited with {enabled}
    return reply.redirect(`${WEBHOOKS_PATH}/${row.endpoint_id}?done=${enabled ? 'enabled' : 'disabled'}`, 303);
  });

  scope.post<Params>(`${path}/reveal`, async (request, reply) => {
    const { session, row } = await mine(request);
    const { endpoint, secret } = await revealEndpointSecret(db, deps, consoleActor(session), row.endpoint_id); // audited
    return show(request, reply, 200, endpointView(endpoint), { secret: { title: 'Signing secret', value: secret } });
  });

  scope.post<Params>(`${path}/rotate`, async (request, reply) => {
    const { session, row } = await mine(request);
    await rotateEndpointSecret(db, deps, consoleActor(session), row.endpoint_id); // audited
    return reply.redirect(`${WEBHOOKS_PATH}/${row.endpoint_id}?done=rotated`, 303);
  });

  scope.post<Params>(`${path}/test`, async (request, reply) => {
    const { session, row } = await mine(request);
    const { outcome: test } = await testEndpoint(db, deps, consoleActor(session), row.endpoint_id, (target) => sendTestEvent({
      client: deps.delivery, ...target, now: new Date(deps.clock.now()),
    })); // audited as event_endpoint.test
    const q = new URLSearchParams({ test: test.ok ? 'ok' : 'failed', ms: String(test.duration_ms) });
    if (test.status_code !== null) q.set('status', String(test.status_code));
    if (!test.ok && test.error) q.set('error', test.error);
    return reply.redirect(`${WEBHOOKS_PATH}/${row.endpoint_id}?${q}`, 303);
  });

  scope.post<Params>(`${path}/resend`, async (request, reply) => {
    const { session, row } = await mine(request);
    const eventId = field(request.body, 'event_id');
    await resendEvent(db, consoleActor(session), eventId); // audited as event.resend
    return reply.redirect(`${WEBHOOKS_PATH}/${row.endpoint_id}?done=resent`, 303);
  });

  scope.get<Params>(`${path}/remove`, async (request, reply) => {
    const { row } = await mine(request);
    return sendPage(request, reply, 200, {
      title: 'Remove webhook endpoint', section: 'webhooks', crumbs: [...WEBHOOKS_CRUMBS, ['Remove endpoint']],
      body: (csrf) => removeWebhookView({ csrf, endpoint: endpointView(row) }),
    });
  });

  scope.post<Params>(`${path}/remove`, async (request, reply) => {
    const { session, row } = await mine(request);
    await removeEndpoint(db, consoleActor(session), row.endpoint_id); // audited as event_endpoint.delete
    return reply.redirect(`${WEBHOOKS_PATH}?done=removed`, 303);
  });
}
