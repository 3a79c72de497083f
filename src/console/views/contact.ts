/**
 * One contact (routes/contact.ts; issue 11 item 6): its fields and variables, its opt-out state with
 * source and time, its inbound messages and the messages sent to it with their status, newest first.
 */
import type { ContactView } from '../../domain/contacts.ts';
import { badge, time } from './format.ts';
import { html, type SafeHtml } from './html.ts';
import { BASE } from './layout.ts';
import { kindLabel, reasonOf } from './sends.ts';
import { dataTable } from './table.ts';

/** The page body. */
export function contactView(c: ContactView): SafeHtml {
  const vars = Object.entries(c.variables ?? {});
  const inbound = c.inbound.length
    ? dataTable({
      label: 'Inbound messages',
      columns: [{ head: 'Received' }, { head: 'Type' }, { head: 'Text' }, { head: 'Payload' }],
      rows: c.inbound.map((m) => ({ cells: [time(m.received_at), m.type, m.text ?? '—', m.payload ?? '—'] })),
    })
    : html`<p>No inbound messages.</p>`;
  const sent = c.messages.length
    ? dataTable({
      label: 'Messages sent',
      columns: [{ head: 'Batch' }, { head: 'Source' }, { head: 'Status' }, { head: 'Reason' }, { head: 'Sent' }, { head: 'Delivered' }, { head: 'Read' }, { head: 'Failed' }],
      rows: c.messages.map((m) => ({
        cells: [html`<a href="${BASE}/sends/${m.batch_id}"><code>${m.batch_id.slice(0, 8)}</code></a>`, kindLabel(m.kind), badge(m.status), reasonOf(m),
          time(m.sent_at), time(m.delivered_at), time(m.read_at), time(m.failed_at)],
      })),
    })
    : html`<p>No messages sent.</p>`;
  return html`<section aria-labelledby="contact-h">
<h2 id="contact-h">${c.phone}</h2>
<dl class="facts">
  <dt>Name</dt><dd>${[c.first_name, c.last_name].filter(Boolean).join(' ') || '—'}</dd>
  <dt>Campaigns</dt><dd data-opted-out="${String(c.opted_out)}">${c.opted_out ? badge('opted_out') : badge('subscribed')}</dd>
  <dt>Opt-out source</dt><dd data-opt-out-source>${c.opt_out_source ?? '—'}</dd>
  <dt>Opt-out changed</dt><dd>${time(c.opt_out_at)}</dd>
  <dt>Created</dt><dd>${time(c.created_at)}</dd>
  ${vars.length ? html`<dt>Variables</dt><dd>${vars.map(([k, v]) => html`<code>${k}</code> = ${typeof v === 'string' ? v : JSON.stringify(v)}<br>`)}</dd>` : ''}
</dl>
</section>
<h2>Inbound messages</h2>
${inbound}
<h2>Messages sent</h2>
${sent}`;
}
