/**
 * Settings › Integrations & developers › Webhooks (routes/webhooks.ts, routes/webhook.ts): the
 * company's event endpoints (docs/events.md), the form to add one, one endpoint's page
 * (edit, enable/disable, reveal or rotate the secret, send a test event, remove) with its attempt log
 * and a resend button per attempt, and the removal confirmation.
 */
import type { AttemptRow } from '../../db/events.ts';
import { EVENT_TYPES, type EndpointView } from '../../domain/event-endpoints.ts';
import { badge, time } from './format.ts';
import { BASE } from './layout.ts';
import { html, type SafeHtml } from './html.ts';
import { dataTable } from './table.ts';

/** Path of the list page. */
export const WEBHOOKS_PATH = `${BASE}/settings/integrations/webhooks`;

/** Breadcrumbs of the Webhooks pages. */
export const WEBHOOKS_CRUMBS: [string, string?][] = [['Settings'], ['Integrations & developers'], ['Webhooks', WEBHOOKS_PATH]];

/** What the add / edit form shows again after a refusal. */
export interface EndpointForm { url: string; description: string; events: string[]; enabled?: boolean }

function eventChoices(selected: string[], idPrefix: string): SafeHtml {
  return html`<fieldset>
  <legend>Events <small>(none ticked: all)</small></legend>
  ${EVENT_TYPES.map((t) => html`<label for="${idPrefix}-${t}"><input type="checkbox" id="${idPrefix}-${t}" name="events" value="${t}"${selected.includes(t) ? html` checked` : ''}> <code>${t}</code></label>`)}
</fieldset>`;
}

function secretBox(title: string, secret: string, note: string): SafeHtml {
  return html`<article class="new-key" aria-labelledby="secret-title">
  <h2 id="secret-title" tabindex="-1">${title}</h2>
  <p>${note}</p>
  <label for="secret-value">Signing secret</label>
  <div role="group" class="key-copy">
    <input id="secret-value" type="text" readonly value="${secret}" spellcheck="false" autocomplete="off" data-secret>
    <button type="button" data-copy="secret-value">Copy</button>
  </div>
  <p class="copy-status" role="status" aria-live="polite" data-copy-status></p>
</article>`;
}

function endpointState(e: EndpointView): SafeHtml {
  if (e.enabled) return e.failing_since ? html`${badge('enabled')} <small>failing since ${time(e.failing_since)}</small>` : badge('enabled');
  return html`${badge('disabled')}${e.disabled_reason ? html` <small>${e.disabled_reason}</small>` : ''}`;
}

export interface WebhooksViewModel {
  csrf: string;
  endpoints: EndpointView[];
  error?: string;
  form: EndpointForm;
}

/** The list page with the add form. */
export function webhooksView(m: WebhooksViewModel): SafeHtml {
  const table = m.endpoints.length === 0
    ? html`<p>No webhook endpoints yet. Add one below.</p>`
    : dataTable({
      label: 'Webhook endpoints',
      columns: [{ head: 'URL' }, { head: 'Events' }, { head: 'Description' }, { head: 'Status' }, { head: 'Actions', hiddenHead: true }],
      rows: m.endpoints.map((e) => ({
        attrs: html`data-endpoint-id="${e.endpoint_id}"`,
        cells: [
          html`<code>${e.url}</code>`,
          e.events.length === EVENT_TYPES.length ? 'All events' : e.events.join(', '),
          e.description ?? html`<span class="muted">—</span>`,
          endpointState(e),
          html`<a href="${WEBHOOKS_PATH}/${e.endpoint_id}">Manage<span class="visually-hidden"> ${e.url}</span></a>`,
        ],
      })),
    });
  return html`<h1>Webhooks</h1>
<p>Webhook endpoints receive your company's events (messages sent, delivered, read, failed or skipped, sends completed, contacts opting out or in, replies) as signed HTTP POSTs, following <a href="https://www.standardwebhooks.com/">Standard Webhooks</a>. Verify each request with the endpoint's signing secret.</p>
<section aria-labelledby="endpoints-title">
  <h2 id="endpoints-title">Endpoints</h2>
  ${table}
</section>
<section aria-labelledby="add-title">
  <h2 id="add-title">Add an endpoint</h2>
  <form method="post" action="${WEBHOOKS_PATH}" novalidate>
    <input type="hidden" name="_csrf" value="${m.csrf}">
    ${m.error ? html`<p id="endpoint-error" class="error" role="alert">${m.error}</p>` : ''}
    <label for="url">URL <small>(https://…)</small></label>
    <input id="url" name="url" type="url" required maxlength="2048" value="${m.form.url}"${m.error ? html` aria-invalid="true" aria-describedby="endpoint-error"` : ''}>
    <label for="description">Description <small>(optional)</small></label>
    <input id="description" name="description" type="text" maxlength="500" value="${m.form.description}">
    ${eventChoices(m.form.events, 'add')}
    <button type="submit">Add endpoint</button>
  </form>
</section>`;
}

export interface WebhookViewModel {
  csrf: string;
  endpoint: EndpointView;
  attempts: AttemptRow[];
  secret?: { title: string; value: string };
  error?: string;
  form: EndpointForm;
  test?: { ok: boolean; status_code: number | null; error: string | null; duration_ms: number | null };
}

function attemptTable(m: WebhookViewModel): SafeHtml {
  if (m.attempts.length === 0) return html`<p>No delivery attempts yet.</p>`;
  const base = `${WEBHOOKS_PATH}/${m.endpoint.endpoint_id}`;
  return dataTable({
    label: 'Delivery attempts',
    columns: [{ head: 'Time' }, { head: 'Event' }, { head: 'Attempt', num: true }, { head: 'Status code' }, { head: 'Duration', num: true }, { head: 'Response' }, { head: 'Resend', hiddenHead: true }],
    rows: m.attempts.map((a) => ({
      attrs: html`data-event-id="${a.event_id}"`,
      cells: [
        time(a.at),
        html`<code>${a.type}</code><br><small><code>${a.event_id}</code></small>`,
        a.attempt,
        a.status_code ?? html`<span class="muted">${a.error ?? '—'}</span>`,
        `${a.duration_ms} ms`,
        a.response_excerpt ? html`<code class="excerpt">${a.response_excerpt}</code>` : a.error ?? '',
        html`<form method="post" action="${base}/resend" class="inline">
  <input type="hidden" name="_csrf" value="${m.csrf}"><input type="hidden" name="event_id" value="${a.event_id}">
  <button type="submit" class="secondary outline">Resend<span class="visually-hidden"> event ${a.event_id}</span></button>
</form>`,
      ],
    })),
  });
}

/** One endpoint's page. */
export function webhookView(m: WebhookViewModel): SafeHtml {
  const e = m.endpoint;
  const base = `${WEBHOOKS_PATH}/${e.endpoint_id}`;
  const hidden = html`<input type="hidden" name="_csrf" value="${m.csrf}">`;
  return html`<h1>Webhook endpoint</h1>
<dl class="facts">
  <dt>URL</dt><dd><code>${e.url}</code></dd>
  <dt>Status</dt><dd>${endpointState(e)}</dd>
  <dt>Added</dt><dd>${time(e.created_at)}</dd>
</dl>
${m.secret ? secretBox(m.secret.title, m.secret.value, 'Keep it secret: whoever has it can sign requests your systems will trust.') : ''}
${m.test ? html`<p class="flash" role="status" data-test-result="${m.test.ok ? 'ok' : 'failed'}">${m.test.ok
    ? html`Test event delivered: HTTP ${m.test.status_code} in ${m.test.duration_ms} ms.`
    : html`Test event not delivered: ${m.test.error ?? `HTTP ${m.test.status_code}`}${m.test.duration_ms !== null ? ` (${m.test.duration_ms} ms)` : ''}.`}</p>` : ''}
<section aria-labelledby="actions-title">
  <h2 id="actions-title">Actions</h2>
  <div class="actions">
    <form method="post" action="${base}/test" class="inline">${hidden}<button type="submit">Send test event</button></form>
    <form method="post" action="${base}/reveal" class="inline">${hidden}<button type="submit" class="secondary">Reveal secret</button></form>
    <form method="post" action="${base}/rotate" class="inline">${hidden}<button type="submit" class="secondary">Rotate secret</button></form>
    <form method="post" action="${base}/enabled" class="inline">${hidden}<input type="hidden" name="enabled" value="${e.enabled ? 'false' : 'true'}"><button type="submit" class="secondary outline">${e.enabled ? 'Disable' : 'Enable'}</button></form>
    <a href="${base}/remove" role="button" class="danger outline">Remove</a>
  </div>
</section>
<section aria-labelledby="edit-title">
  <h2 id="edit-title">Settings</h2>
  <form method="post" action="${base}" novalidate>
    ${hidden}
    ${m.error ? html`<p id="endpoint-error" class="error" role="alert">${m.error}</p>` : ''}
    <label for="url">URL</label>
    <input id="url" name="url" type="url" required maxlength="2048" value="${m.form.url}"${m.error ? html` aria-invalid="true" aria-describedby="endpoint-error"` : ''}>
    <label for="description">Description <small>(optional)</small></label>
    <input id="description" name="description" type="text" maxlength="500" value="${m.form.description}">
    ${eventChoices(m.form.events, 'edit')}
    <button type="submit">Save</button>
  </form>
</section>
<section aria-labelledby="attempts-title">
  <h2 id="attempts-title">Delivery attempts</h2>
  ${attemptTable(m)}
</section>`;
}

/** Confirmation before removing an endpoint. */
export function removeWebhookView(m: { csrf: string; endpoint: EndpointView }): SafeHtml {
  const base = `${WEBHOOKS_PATH}/${m.endpoint.endpoint_id}`;
  return html`<article class="narrow" aria-labelledby="remove-title">
  <h1 id="remove-title">Remove webhook endpoint?</h1>
  <p><code>${m.endpoint.url}</code> will receive no more events; its pending deliveries and attempt log are deleted. This cannot be undone.</p>
  <form method="post" action="${base}/remove" class="actions">
    <input type="hidden" name="_csrf" value="${m.csrf}">
    <button type="submit" class="danger">Remove endpoint</button>
    <a href="${base}" role="button" class="secondary outline">Cancel</a>
  </form>
</article>`;
}
