/**
 * The Sends list and the phone search results (routes/sends.ts): each batch's funnel (sent → delivered
 * → read, failed, skipped, pending; docs/decisions.md#7-a-messages-life) and each message's status, delivered
 * and read times, and the next attempt of a message waiting for a retry.
 */
import type { BatchRow, FoundMessage } from '../queries/sends.ts';
import { badge, time } from './format.ts';
import { BASE } from './layout.ts';
import { html, type SafeHtml } from './html.ts';
import { dataTable } from './table.ts';

export interface SendsViewModel {
  phone: string;
  batches?: BatchRow[];
  page?: number;
  more?: boolean;
  found?: FoundMessage[];
}

/** "Automation #7" / "Campaign #9". */
export function kindLabel(kind: string, sourceId?: number): string {
  const name = kind === 'automation' ? 'Automation' : kind === 'campaign' ? 'Campaign' : kind;
  return sourceId === undefined ? name : `${name} #${sourceId}`;
}

function searchForm(phone: string): SafeHtml {
  return html`<search><form method="get" action="${BASE}/sends" class="search">
  <label for="phone">Find messages to a phone number</label>
  <div role="group">
    <input id="phone" name="phone" type="search" inputmode="tel" autocomplete="off" maxlength="64" value="${phone}" placeholder="+49 151 12345678" aria-describedby="phone-hint">
    <button type="submit">Search</button>
  </div>
  <small id="phone-hint">A full number (without country code your company's default country is assumed), or at least 4 of its digits.</small>
</form></search>`;
}

/**
 * When a pending message is attempted next: its retry time, or the delivery-hours opening it waits
 * for; '—' for any other message.
 */
export function nextAttempt(m: { status: string; next_attempt_at?: Date | null; scheduled_for?: Date | null }): SafeHtml | string {
  if (m.status !== 'pending') return '—';
  return time(m.next_attempt_at ?? m.scheduled_for ?? null);
}

function batchLink(id: string): SafeHtml {
  return html`<a href="${BASE}/sends/${id}"><code>${id.slice(0, 8)}</code><span class="visually-hidden"> (batch ${id})</span></a>`;
}

function batchesTable(batches: BatchRow[]): SafeHtml {
  return dataTable({
    label: 'Recent batches',
    columns: [{ head: 'Batch' }, { head: 'Created' }, { head: 'Source' }, { head: 'Status' },
      { head: 'Total', num: true }, { head: 'Sent', num: true }, { head: 'Delivered', num: true }, { head: 'Read', num: true },
      { head: 'Failed', num: true }, { head: 'Skipped', num: true }, { head: 'Pending', num: true }],
    rows: batches.map((b) => ({
      attrs: html`data-batch-id="${b.batch_id}"`,
      cells: [batchLink(b.batch_id), time(b.created_at), kindLabel(b.kind, b.source_id), badge(b.status),
        b.counts.total, b.counts.sent, b.counts.delivered, b.counts.read, b.counts.failed, b.counts.skipped, b.counts.pending],
    })),
  });
}

/** The reason of a skip, or the provider's error with its code ("HTTP 503 (503)" is shown once). */
export function reasonOf(m: { reason?: string | null; error?: string | null; error_code?: string | null }): string {
  if (m.reason) return m.reason;
  if (!m.error) return '—';
  return m.error_code && !m.error.includes(m.error_code) ? `${m.error} (code ${m.error_code})` : m.error;
}

function foundTable(found: FoundMessage[]): SafeHtml {
  return dataTable({
    label: 'Messages found',
    columns: [{ head: 'Batch' }, { head: 'Created' }, { head: 'Source' }, { head: 'Phone' }, { head: 'Status' }, { head: 'Reason' },
      { head: 'Sent' }, { head: 'Delivered' }, { head: 'Read' }, { head: 'Next attempt' }],
    rows: found.map((m) => ({
      cells: [batchLink(m.batch_id), time(m.batch_created_at), kindLabel(m.kind, m.source_id), m.phone, badge(m.status), reasonOf(m),
        time(m.sent_at), time(m.delivered_at), time(m.read_at), nextAttempt(m)],
    })),
  });
}

/** The page body: search form, then either search results or a page of batches. */
export function sendsView(m: SendsViewModel): SafeHtml {
  if (m.found) {
    return html`<h1>Sends to ${m.phone}</h1>
${searchForm(m.phone)}
${m.found.length === 0 ? html`<p role="status">No messages to this number.</p>` : html`<p role="status">${m.found.length} message${m.found.length === 1 ? '' : 's'} found${m.found.length >= 100 ? ' (the newest 100)' : ''}.</p>${foundTable(m.found)}`}
<p><a href="${BASE}/sends">All batches</a></p>`;
  }
  const page = m.page ?? 1;
  const batches = m.batches ?? [];
  return html`<h1>Sends</h1>
<p>Batches accepted from automation triggers and campaign sends, newest first.</p>
${searchForm('')}
${batches.length === 0 ? html`<p>${page > 1 ? 'No more batches.' : 'Nothing was sent yet.'}</p>` : batchesTable(batches)}
${page > 1 || m.more ? html`<nav aria-label="Pages" class="pager">
  ${page > 1 ? html`<a href="${BASE}/sends?page=${page - 1}" rel="prev">Newer batches</a>` : ''}
  ${m.more ? html`<a href="${BASE}/sends?page=${page + 1}" rel="next">Older batches</a>` : ''}
</nav>` : ''}`;
}
