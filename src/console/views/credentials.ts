/** Settings › Integrations & developers › Credentials (routes/credentials.ts). */
import type { CreatedKey } from '../../domain/api-keys.ts';
import type { Company } from '../../domain/companies.ts';
import type { KeyRow } from '../queries/keys.ts';
import { badge, channelName, time } from './format.ts';
import { BASE } from './layout.ts';
import { html, type SafeHtml } from './html.ts';
import { dataTable } from './table.ts';

/** Breadcrumbs of the Credentials pages. */
export const CREDENTIALS_CRUMBS: [string, string?][] = [['Settings'], ['Integrations & developers'], ['Credentials', `${BASE}/settings/integrations/credentials`]];

export interface CredentialsViewModel {
  csrf: string;
  company: Company;
  keys: KeyRow[];
  /** A key created by this request: shown once. */
  created?: CreatedKey;
  error?: string;
  label: string;
}

function createdKey(k: CreatedKey): SafeHtml {
  return html`<article class="new-key" aria-labelledby="new-key-title">
  <h2 id="new-key-title" tabindex="-1">Your new API key${k.label ? html` “${k.label}”` : ''}</h2>
  <p><strong>Copy it now: it is shown only this once</strong> and cannot be retrieved later. Send it in the <code>service-api-key</code> header.</p>
  <label for="new-key-value">API key</label>
  <div role="group" class="key-copy">
    <input id="new-key-value" type="text" readonly value="${k.api_key}" spellcheck="false" autocomplete="off" data-new-key>
    <button type="button" data-copy="new-key-value">Copy</button>
  </div>
  <p class="copy-status" role="status" aria-live="polite" data-copy-status></p>
</article>`;
}

function status(c: Company): SafeHtml {
  return html`<section aria-labelledby="status-title">
  <h2 id="status-title">Service status</h2>
  <dl class="facts">
    <dt>Subscription</dt><dd>${c.subscription_active ? badge('active') : badge('inactive')}
      ${c.subscription_active ? '' : html`<small>Adding contacts to segments is refused until the subscription is active.</small>`}</dd>
    <dt>Push-messaging connector</dt><dd>${c.connector.connected ? html`${badge('connected')}${c.connector.provider ? html` <span>${c.connector.provider}</span>` : ''}` : badge('not_connected')}</dd>
    <dt>Channel in use</dt><dd>${channelName(c.channel.provider)}</dd>
  </dl>
</section>`;
}

function keyTable(keys: KeyRow[]): SafeHtml {
  if (keys.length === 0) return html`<p>No API keys yet. Create one below.</p>`;
  return dataTable({
    label: 'All API keys',
    columns: [{ head: 'Label' }, { head: 'Key' }, { head: 'Created' }, { head: 'Last used' }, { head: 'Status' }],
    rows: keys.map((k) => ({
      attrs: html`data-key-id="${k.key_id}"`,
      cells: [
        k.label ?? html`<span class="muted">(no label)</span>`,
        html`<code>${k.prefix}…</code>`,
        time(k.created_at),
        time(k.last_used_at, 'Never'),
        k.revoked_at
          ? html`${badge('revoked')} <small>${time(k.revoked_at)}</small>`
          : html`${badge('active')} <a href="${BASE}/settings/integrations/credentials/${k.key_id}/revoke" class="danger-link">Revoke<span class="visually-hidden"> key ${k.label ?? k.prefix}</span></a>`,
      ],
    })),
  });
}

/** The page body. */
export function credentialsView(m: CredentialsViewModel): SafeHtml {
  return html`<h1>Credentials</h1>
<p>API keys let your integration call the Contact Messaging Service API. Each request carries one in the <code>service-api-key</code> header.</p>
${m.created ? createdKey(m.created) : ''}
<section aria-labelledby="keys-title">
  <h2 id="keys-title">API keys</h2>
  ${keyTable(m.keys)}
  <form method="post" action="${BASE}/settings/integrations/credentials" class="create-key" novalidate>
    <input type="hidden" name="_csrf" value="${m.csrf}">
    <label for="label">Label <small>(optional, e.g. “shop integration”)</small></label>
    ${m.error ? html`<p id="label-error" class="error" role="alert">${m.error}</p>` : ''}
    <div role="group">
      <input id="label" name="label" type="text" maxlength="255" value="${m.label}"${m.error ? html` aria-invalid="true" aria-describedby="label-error"` : ''}>
      <button type="submit">Create API key</button>
    </div>
  </form>
</section>
${status(m.company)}`;
}
