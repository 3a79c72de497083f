/** The Segments list and one segment's page (routes/segments.ts, routes/segment.ts). */
import type { MemberRow, SegmentRow } from '../queries/segments.ts';
import { time } from './format.ts';
import { BASE } from './layout.ts';
import { html, type SafeHtml } from './html.ts';
import { dataTable } from './table.ts';

/** Table of segments: name (link), id, members, created. */
export function segmentsView(segments: SegmentRow[]): SafeHtml {
  return html`<h1>Segments</h1>
<p>Static segments of your contacts, created and filled through the API. A company can hold at most 20.</p>
${segments.length === 0 ? html`<p>No segments yet. Create one with <code>POST /api/segments/create</code>.</p>` : dataTable({
    label: 'Segments',
    columns: [{ head: 'Name' }, { head: 'Segment id' }, { head: 'Members', num: true }, { head: 'Created' }],
    rows: segments.map((s) => ({
      attrs: html`data-segment-id="${s.segment_id}"`,
      cells: [html`<a href="${BASE}/segments/${s.segment_id}">${s.name}</a>`, s.segment_id, s.members, time(s.created_at)],
    })),
  })}`;
}

/** One segment: facts and its most recently added members. */
export function segmentView(s: SegmentRow, members: MemberRow[], shown: number): SafeHtml {
  return html`<h1>${s.name}</h1>
<dl class="facts">
  <dt>Segment id</dt><dd>${s.segment_id}</dd>
  <dt>Members</dt><dd data-members>${s.members}</dd>
  <dt>Created</dt><dd>${time(s.created_at)}</dd>
</dl>
<h2>Members</h2>
${members.length === 0 ? html`<p>This segment has no members yet.</p>` : html`
${s.members > shown ? html`<p>The ${shown} most recently added of ${s.members} members.</p>` : ''}
${dataTable({
    label: 'Members',
    columns: [{ head: 'Phone' }, { head: 'Name' }, { head: 'Added' }],
    rows: members.map((m) => ({ cells: [m.phone, [m.first_name, m.last_name].filter(Boolean).join(' ') || '—', time(m.added_at)] })),
  })}`}`;
}
