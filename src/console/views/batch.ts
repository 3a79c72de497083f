/**
 * One batch with its messages (routes/batch.ts): the funnel (docs/decisions.md#7-a-messages-life), the counts by
 * status as filter links, the delivery progress while it processes, and one page of its messages with
 * per message its status, reason or error, attempts, sent / delivered / read times and the next attempt
 * of a message waiting for a retry or for delivery hours; a pager (first page, next page) below.
 */
import type { MessageStatus } from '../../db/schema.ts';
import type { BatchView, MessageView } from '../../domain/batches.ts';
import type { Progress } from '../../domain/batch-messages.ts';
import type { SendLabel } from '../queries/sends.ts';
import { badge, num, time } from './format.ts';
import { BASE } from './layout.ts';
import { html, type SafeHtml } from './html.ts';
import { nextAttempt, reasonOf, sendStatus, sourceName } from './sends.ts';
import { dataTable } from './table.ts';

export interface BatchViewModel {
  batch: BatchView;
  /** The page's heading (routes/batch.ts: the source's name and the send's time). */
  title?: string;
  /** The source's name, the scheduled time, whether cancelled (queries/sends.ts). */
  label?: SendLabel;
  /** The clock (ms): a send whose time is later shows "scheduled". */
  now?: number;
  /** One page of messages (batch order), and the cursor of the next page (null: the last). */
  messages: MessageView[]; next: string | null;
  /** Whether this is a page after the first. */
  paged: boolean;
  phone: string;
  /** Why the phone filter could not be used ('' when it could). */
  phoneError: string;
  status: MessageStatus | undefined;
  /** Messages matching the phone filter (without a status filter). */
  matches: number | undefined;
  progress: Progress | undefined;
  /** Seconds between reloads (0: the page does not reload). */
  refreshing: number;
  /** Whether the role may cancel the batch (the Cancel link is left out otherwise). */
  canCancel: boolean;
  /** Whether the role may pause and resume the batch (the buttons are left out otherwise). */
  canPause?: boolean;
  /** The page's CSRF token (the Pause / Resume forms). */
  csrf?: string;
}

/** Pause or Resume (docs/decisions.md "Cancel, pause and resume"), for a batch still running and not cancelled. */
function controlForm(m: BatchViewModel, self: string): SafeHtml | '' {
  const b = m.batch;
  if (!m.canPause || !m.csrf || b.status === 'completed' || b.cancelled) return '';
  const paused = b.status === 'paused';
  return html`<form method="post" action="${self}/${paused ? 'resume' : 'pause'}" class="batch-control">
<input type="hidden" name="_csrf" value="${m.csrf}">
${paused
    ? html`<p>Paused: nothing more of this send is handed to a provider until you resume it.</p><button type="submit" data-resume>Resume the send</button>`
    : html`<button type="submit" class="secondary" data-pause>Pause the send</button> <small>Messages already handed to a provider still go out; the rest wait until you resume.</small>`}
</form>`;
}

/** `~ 3 h 20 min` / `~ 4 min` / `under a minute` for a duration in ms. */
export function durationText(ms: number): string {
  const min = Math.ceil(ms / 60_000);
  if (ms < 60_000) return 'under a minute';
  if (min < 60) return `about ${min} min`;
  const h = Math.floor(min / 60);
  return h >= 48 ? `about ${Math.round(h / 24)} days` : `about ${h} h ${min % 60} min`;
}

/** The messages of each own status, from the funnel counts. */
function byStatus(c: BatchView['counts']): [MessageStatus, number][] {
  return [['pending', c.pending], ['sent', c.sent - c.delivered], ['delivered', c.delivered - c.read], ['read', c.read], ['failed', c.failed], ['skipped', c.skipped]];
}

/** Facts, counts and progress of the batch, the filters, one page of messages and the pager. */
export function batchView(m: BatchViewModel): SafeHtml {
  const b = m.batch;
  const c = b.counts;
  const self = `${BASE}/sends/${b.batch_id}`;
  const query = (extra: Record<string, string | undefined>) => {
    const p = new URLSearchParams();
    for (const [k, v] of Object.entries({ status: m.status, phone: m.phone || undefined, ...extra })) if (v) p.set(k, v);
    const s = p.toString();
    return s ? `${self}?${s}` : self;
  };
  const counts = byStatus(c);
  const filtered = m.status !== undefined || m.phone !== '';
  const status = sendStatus({ ...b, ...m.label }, m.now ?? Date.now());
  const sourcePath = `${BASE}/${b.kind}s/${b.source_id}`;
  return html`<h1 tabindex="-1" autofocus data-send-heading>${m.title ?? sourceName(b)}</h1>
<dl class="facts">
  <dt>${b.kind === 'automation' ? 'Automation' : 'Campaign'}</dt><dd>${m.label?.source_name ? html`<a href="${sourcePath}">${m.label.source_name}</a>` : sourceName(b)}</dd>
  <dt>Status</dt><dd data-send-status="${status}">${badge(status)}</dd>
  <dt>Accepted</dt><dd>${time(b.created_at)}</dd>
  ${m.label?.send_at ? html`<dt>Scheduled for</dt><dd data-scheduled-for>${time(m.label.send_at)}</dd>` : ''}
  <dt>${status === 'cancelled' ? 'Ended' : 'Completed'}</dt><dd>${time(b.completed_at, status === 'cancelled' ? 'being cancelled' : '—')}</dd>
  <dt>Contacts</dt><dd>${num(c.total)} total: ${num(c.sent)} sent, ${num(c.failed)} failed, ${num(c.skipped)} skipped, ${num(c.pending)} pending</dd>
  <dt>Funnel</dt><dd class="funnel">${num(c.sent)} sent → ${num(c.delivered)} delivered → ${num(c.read)} read</dd>
  ${b.ignored_contacts ? html`<dt>Ignored</dt><dd>${num(b.ignored_contacts)} contacts beyond the first 50 of the request</dd>` : ''}
  ${m.progress ? html`<dt>Rate</dt><dd data-rate>${m.progress.per_minute < 10 ? m.progress.per_minute.toFixed(1) : num(Math.round(m.progress.per_minute))} messages per minute (last 5 minutes)</dd>
  <dt>Time left</dt><dd data-eta>${c.pending === 0 ? 'none' : m.progress.remaining_ms === null ? 'unknown (nothing delivered in the last 5 minutes)' : durationText(m.progress.remaining_ms)}</dd>` : ''}
  <dt>Send id</dt><dd><code class="batch-id">${b.batch_id}</code></dd>
</dl>
${m.refreshing ? html`<p class="refresh-note">This page reloads every ${m.refreshing} seconds while the send is being delivered. <a href="${query({ refresh: '0' })}">Stop refreshing</a></p>` : ''}
${controlForm(m, self)}
${b.status === 'completed' || b.cancelled ? '' : m.canCancel ? html`<p><a href="${self}/cancel" data-cancel>Cancel what has not been sent yet</a></p>` : ''}
${b.cancelled && b.status !== 'completed' ? html`<p role="status" data-cancelling>Cancelled: the messages not handed to a provider are being marked skipped.</p>` : ''}
<h2>Messages</h2>
<nav aria-label="Messages by status" class="status-filter"><ul>
  <li><a href="${m.phone ? `${self}?phone=${encodeURIComponent(m.phone)}` : self}"${m.status === undefined ? html` aria-current="page"` : ''}>All (${num(c.total)})</a></li>
  ${counts.map(([st, n]) => html`<li><a href="${query({ status: st })}" data-status-count="${st}"${m.status === st ? html` aria-current="page"` : ''}>${st} (${num(n)})</a></li>`)}
</ul></nav>
<search><form method="get" action="${self}" class="search">
  ${m.status ? html`<input type="hidden" name="status" value="${m.status}">` : ''}
  <label for="phone">Filter by phone number</label>
  <div role="group">
    <input id="phone" name="phone" type="search" inputmode="tel" autocomplete="off" maxlength="64" value="${m.phone}" aria-describedby="phone-hint">
    <button type="submit">Filter</button>
  </div>
  <small id="phone-hint">A full number, or at least 4 of its digits.</small>
</form></search>
${m.phoneError ? html`<p class="error" role="alert">${m.phoneError}</p>` : ''}
${m.phone && m.matches !== undefined ? html`<p role="status">${num(m.matches)} of ${num(c.total)} messages match “${m.phone}”. <a href="${self}">Show all</a></p>` : ''}
${m.messages.length === 0 ? html`<p>${!filtered && (c.total === 0 || b.status === 'accepted') ? 'No messages yet: the send is still being prepared.' : 'No message matches.'}</p>` : dataTable({
    label: 'Messages',
    columns: [{ head: 'Phone' }, { head: 'Status' }, { head: 'Reason' }, { head: 'Attempts', num: true }, { head: 'Sent' },
      { head: 'Delivered' }, { head: 'Read' }, { head: 'Next attempt' }],
    rows: m.messages.map((msg) => ({
      attrs: html`data-message-id="${msg.message_id}"`,
      cells: [msg.phone, badge(msg.status), reasonOf(msg), msg.attempts, time(msg.sent_at ?? null),
        time(msg.delivered_at ?? null), time(msg.read_at ?? null), nextAttempt(msg)],
    })),
  })}
${m.paged || m.next ? html`<nav class="pager" aria-label="Message pages">${m.paged ? html`<a href="${query({})}">First page</a>` : ''}${m.next ? html`<a href="${query({ after: m.next })}" rel="next">Next page</a>` : ''}</nav>` : ''}`;
}
