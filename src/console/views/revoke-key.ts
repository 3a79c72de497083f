/** Confirmation before revoking an API key (routes/revoke-key.ts). */
import type { KeyRow } from '../queries/keys.ts';
import { time } from './format.ts';
import { BASE } from './layout.ts';
import { html, type SafeHtml } from './html.ts';

/** Names the key, says what revoking does, and offers Revoke (a form) or Cancel (a link). */
export function revokeView(m: { csrf: string; key: KeyRow }): SafeHtml {
  const k = m.key;
  return html`<article class="narrow" aria-labelledby="revoke-title">
  <h1 id="revoke-title">Revoke API key?</h1>
  <dl class="facts">
    <dt>Label</dt><dd>${k.label ?? '(no label)'}</dd>
    <dt>Key</dt><dd><code>${k.prefix}…</code></dd>
    <dt>Created</dt><dd>${time(k.created_at)}</dd>
    <dt>Last used</dt><dd>${time(k.last_used_at, 'Never')}</dd>
  </dl>
  <p>Every request that uses this key will be refused from now on. This cannot be undone: an integration that uses it needs a new key.</p>
  <form method="post" action="${BASE}/settings/integrations/credentials/${k.key_id}/revoke" class="actions">
    <input type="hidden" name="_csrf" value="${m.csrf}">
    <button type="submit" class="danger">Revoke key</button>
    <a href="${BASE}/settings/integrations/credentials" role="button" class="secondary outline">Cancel</a>
  </form>
</article>`;
}
