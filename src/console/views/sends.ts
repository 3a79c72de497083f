/**
 * The Sends list and the phone search results (routes/sends.ts): each send named by its automation or
 * campaign, its status in words (scheduled, cancelled, … {@link sendStatus}) and its funnel (sent →
 * delivered → read, failed, skipped, pending; docs/decisions.md#7-a-messages-life), and each message's
 * status, delivered and read times, and the next attempt of a message waiting for a retry.
 */
import type { BatchRow, FoundMessage } from '../queries/sends.ts';
import { reasonWords } from '../queries/overview.ts';
import { badge, localDateTime, num, time } from './format.ts';
import { BASE } from './layout.ts';
import { html, type SafeHtml } from './html.ts';
import { dataTable } from './table.ts';

export interface SendsViewModel {
  phone: string;
  /** The clock (ms): a send whose time is later shows "scheduled". */
  now?: number;
  batches?: BatchRow[];
  page?: number;
  more?: boolean;
  found?: FoundMessage[];
}

/** "Automation #7" / "Campaign #9" (a source without its name, e.g. one that no longer exists). */
export function kindLabel(kind: string, sourceId?: number): string {
  const name = kind === 'automation' ? 'Automation' : kind === 'campaign' ? 'Campaign' : kind;
  return sourceId === undefined ? name : `${name} #${sourceId}`;
}

/** The name of a send's automation or campaign, else {@link kindLabel}. */
export function sourceName(s: { kind: string; source_id: number; source_name?: string | null }): string {
  return s.source_name ?? kindLabel(s.kind, s.source_id);
}

/**
 * The status a send shows (see format.ts STATUS_MEANING): `cancelled` once cancelled (also when its
 * batch completed), `paused`, `completed`, `scheduled` while its time (`send_at`) is after `now` (ms),
 * else the stored one (`accepted`, `processing`).
 */
export function sendStatus(b: { status: string; cancelled?: boolean; send_at?: string | null }, now: number): string {
  if (b.cancelled) return 'cancelled';
  if (b.status === 'paused' || b.status === 'completed') return b.status;
  if (b.send_at && Date.parse(b.send_at) > now) return 'scheduled';
  return b.status;
}

/**
 * A send's title in `timeZone`: "Spring sale — send of 27 Nov 2026, 14:05" (when it was accepted), or
 * "… — send scheduled for …" while it waits for its time.
 */
export function sendTitle(b: { kind: string; source_id: number; source_name?: string | null; created_at: Date; send_at?: string | null }, timeZone: string, now: number): string {
  const later = b.send_at && Date.parse(b.send_at) > now;
  return `${sourceName(b)} — ${later ? `send scheduled for ${localDateTime(Date.parse(b.send_at!), timeZone)}` : `send of ${localDateTime(b.created_at, timeZone)}`}`;
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

/** A link to a send's page named by its source, with its kind ("campaign") beside it. */
function sendLink(b: { batch_id: string; kind: string; source_id: number; source_name?: string | null }): SafeHtml {
  return html`<a href="${BASE}/sends/${b.batch_id}" data-send-link>${sourceName(b)}</a> <small class="muted">${b.kind}</small>`;
}

function batchesTable(batches: BatchRow[], now: number): SafeHtml {
  return dataTable({
    label: 'Recent sends',
    columns: [{ head: 'Send' }, { head: 'Accepted' }, { head: 'Status' },
      { head: 'Total', num: true }, { head: 'Sent', num: true }, { head: 'Delivered', num: true }, { head: 'Read', num: true },
      { head: 'Failed', num: true }, { head: 'Skipped', num: true }, { head: 'Pending', num: true }],
    rows: batches.map((b) => ({
      attrs: html`data-batch-id="${b.batch_id}"`,
      cells: [sendLink(b), html`${time(b.created_at)}${b.send_at && Date.parse(b.send_at) > now ? html`<br><small>scheduled for ${time(b.send_at)}</small>` : ''}`, badge(sendStatus(b, now)),
        b.counts.total, b.counts.sent, b.counts.delivered, b.counts.read, b.counts.failed, b.counts.skipped, b.counts.pending],
    })),
  });
}

/** The reason of a skip or a wait in plain words, or the provider's error with its code ("HTTP 503 (503)" is shown once). */
export function reasonOf(m: { reason?: string | null; error?: string | null; error_code?: string | null }): string {
  if (m.reason) return reasonWords(m.reason);
  if (!m.error) return '—';
  return m.error_code && !m.error.includes(m.error_code) ? `${m.error} (code ${m.error_code})` : m.error;
}

function foundTable(found: FoundMessage[]): SafeHtml {
  return dataTable({
    label: 'Messages found',
    columns: [{ head: 'Send' }, { head: 'Accepted' }, { head: 'Phone' }, { head: 'Status' }, { head: 'Reason' },
      { head: 'Sent' }, { head: 'Delivered' }, { head: 'Read' }, { head: 'Next attempt' }],
    rows: found.map((m) => ({
      cells: [sendLink(m), time(m.batch_created_at), m.phone, badge(m.status), reasonOf(m),
        time(m.sent_at), time(m.delivered_at), time(m.read_at), nextAttempt(m)],
    })),
  });
}

/** The page body: search form, then either search results or a page of batches. */
export function sendsView(m: SendsViewModel): SafeHtml {
  if (m.found) {
    return html`<h1>Sends to ${m.phone}</h1>
${searchForm(m.phone)}
${m.found.length === 0 ? html`<p role="status">No messages to this number.</p>` : html`<p role="status">${num(m.found.length)} message${m.found.length === 1 ? '' : 's'} found${m.found.length >= 100 ? ' (the newest 100)' : ''}.</p>${foundTable(m.found)}`}
<p><a href="${BASE}/sends">All sends</a></p>`;
  }
  const page = m.page ?? 1;
  const batches = m.batches ?? [];
  return html`<h1>Sends</h1>
<p>Every campaign send and every automation request, newest first.</p>
${searchForm('')}
${batches.length === 0 ? html`<p>${page > 1 ? 'No more sends.' : 'Nothing was sent yet.'}</p>` : batchesTable(batches, m.now ?? Date.now())}
${page > 1 || m.more ? html`<nav aria-label="Pages" class="pager">
  ${page > 1 ? html`<a href="${BASE}/sends?page=${page - 1}" rel="prev">Newer sends</a>` : ''}
  ${m.more ? html`<a href="${BASE}/sends?page=${page + 1}" rel="next">Older sends</a>` : ''}
</nav>` : ''}`;
}
