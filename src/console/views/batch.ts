/**
 * One batch with its messages (routes/batch.ts): the funnel (receipts-and-events.md §1) and per
 * message its status, reason or error, attempts, sent / delivered / read times and the next attempt of
 * a message waiting for a retry or for delivery hours.
 */
import type { BatchView, MessageView } from '../../domain/batches.ts';
import { badge, time } from './format.ts';
import { BASE } from './layout.ts';
import { html, type SafeHtml } from './html.ts';
import { kindLabel, nextAttempt, reasonOf } from './sends.ts';
import { dataTable } from './table.ts';

export interface BatchViewModel {
  batch: BatchView; messages: MessageView[]; phone: string; total: number;
  /** Whether the role may cancel the batch (the Cancel link is left out otherwise). */
  canCancel: boolean;
}

/** Facts and counts of the batch, a filter by phone, and the messages table. */
export function batchView(m: BatchViewModel): SafeHtml {
  const b = m.batch;
  const c = b.counts;
  return html`<h1>Batch <code class="batch-id">${b.batch_id}</code></h1>
<dl class="facts">
  <dt>Source</dt><dd>${kindLabel(b.kind, b.source_id)}</dd>
  <dt>Status</dt><dd>${badge(b.status)}</dd>
  <dt>Accepted</dt><dd>${time(b.created_at)}</dd>
  <dt>Completed</dt><dd>${time(b.completed_at)}</dd>
  <dt>Contacts</dt><dd>${c.total} total: ${c.sent} sent, ${c.failed} failed, ${c.skipped} skipped, ${c.pending} pending</dd>
  <dt>Funnel</dt><dd class="funnel">${c.sent} sent → ${c.delivered} delivered → ${c.read} read</dd>
  ${b.ignored_contacts ? html`<dt>Ignored</dt><dd>${b.ignored_contacts} contacts beyond the first 50 of the request</dd>` : ''}
</dl>
${b.status === 'completed' ? '' : m.canCancel ? html`<p><a href="${BASE}/sends/${b.batch_id}/cancel" data-cancel>Cancel what has not been sent yet</a></p>` : ''}
<h2>Messages</h2>
<search><form method="get" action="${BASE}/sends/${b.batch_id}" class="search">
  <label for="phone">Filter by phone number</label>
  <div role="group">
    <input id="phone" name="phone" type="search" inputmode="tel" autocomplete="off" maxlength="64" value="${m.phone}">
    <button type="submit">Filter</button>
  </div>
</form></search>
${m.phone ? html`<p role="status">${m.messages.length} of ${m.total} messages match “${m.phone}”. <a href="${BASE}/sends/${b.batch_id}">Show all</a></p>` : ''}
${m.messages.length === 0 ? html`<p>${m.total === 0 ? 'No messages yet: the batch is still being prepared.' : 'No message matches.'}</p>` : dataTable({
    label: 'Messages',
    columns: [{ head: 'Phone' }, { head: 'Status' }, { head: 'Reason' }, { head: 'Attempts', num: true }, { head: 'Sent' },
      { head: 'Delivered' }, { head: 'Read' }, { head: 'Next attempt' }],
    rows: m.messages.map((msg) => ({
      attrs: html`data-message-id="${msg.message_id}"`,
      cells: [msg.phone, badge(msg.status), reasonOf(msg), msg.attempts, time(msg.sent_at ?? null),
        time(msg.delivered_at ?? null), time(msg.read_at ?? null), nextAttempt(msg)],
    })),
  })}`;
}
