/**
 * Segment pages of the console (routes/segments.ts, routes/segment.ts, routes/segment-members.ts): the list with the create form, one segment's page (facts, members paged 50 at a
 * time, the add / remove members form with numbers, digests or a CSV file, the result of the last
 * change, the rename form, a link to delete) and the delete confirmation. Every form shows its errors
 * beside the field, with the input kept.
 */
import { MAX_SEGMENTS_PER_COMPANY, SEGMENT_NAME_MAX, type MembershipSummary, type SegmentSummary, type MemberEntry } from '../../domain/segments.ts';
import { MAX_UPLOAD_BYTES } from '../../domain/segment-lists.ts';
import { num, readOnlyNote, time } from './format.ts';
import { BASE } from './layout.ts';
import { html, type SafeHtml } from './html.ts';
import { dataTable } from './table.ts';
import type { FilterWords } from '../segment-builder.ts';
import { filterWordsView } from './segment-builder.ts';

/** Problems by form field (`name`, `mode`, `numbers`, `file`). */
export type FieldErrors = Partial<Record<'name' | 'mode' | 'numbers' | 'file', string>>;

const err = (e: FieldErrors, k: keyof FieldErrors) => (e[k] ? html`<small id="${k}-error" class="error" role="alert">${e[k]}</small>` : '');
const inv = (e: FieldErrors, k: keyof FieldErrors) => (e[k] ? html` aria-invalid="true" aria-describedby="${k}-error"` : '');
const n = num;

/** Shown instead of the forms to a role that may only look (permissions.ts). */
const READ_ONLY = readOnlyNote('segments');

/** The Segments page: the company's segments and, when `canEdit`, the create form. */
export function segmentsView(m: { csrf: string; segments: SegmentSummary[]; name: string; errors: FieldErrors; canEdit: boolean }): SafeHtml {
  const full = m.segments.length >= MAX_SEGMENTS_PER_COMPANY;
  return html`<h1>Segments</h1>
<p>Lists of your contacts to send campaigns to: static ones you fill by hand (your integration can also create and fill them through the API), and dynamic ones whose members are the contacts matching their conditions. A company can hold at most ${n(MAX_SEGMENTS_PER_COMPANY)} segments; you have ${n(m.segments.length)}.</p>
${m.segments.length === 0 ? html`<p>No segments yet.${m.canEdit ? ' Create one below.' : ''}</p>` : dataTable({
    label: 'Segments',
    columns: [{ head: 'Name' }, { head: 'Segment id' }, { head: 'Kind' }, { head: 'Members', num: true }, { head: 'Created' }],
    rows: m.segments.map((s) => ({
      attrs: html`data-segment-id="${s.segment_id}" data-kind="${s.filter == null ? 'static' : 'dynamic'}"`,
      cells: [html`<a href="${BASE}/segments/${s.segment_id}">${s.name}</a>`, s.segment_id, s.filter == null ? 'static' : 'dynamic', n(s.members), time(s.created_at)],
    })),
  })}
${m.canEdit ? html`<section aria-labelledby="create-title" class="narrow">
  <h2 id="create-title">Create a segment</h2>
  ${full ? html`<p class="muted">You have ${MAX_SEGMENTS_PER_COMPANY} segments, the most a company can hold: delete one to create another.</p>` : ''}
  <p>A dynamic segment follows conditions you choose (variables, tags, messages and replies within a time…): <a href="${BASE}/segments/new" role="button" class="secondary">New dynamic segment</a></p>
  <p>A static segment starts empty; you add its members by phone number or from a CSV file.</p>
  <form method="post" action="${BASE}/segments" novalidate>
    <input type="hidden" name="_csrf" value="${m.csrf}">
    <label for="name">Name</label>
    <input id="name" name="name" type="text" maxlength="${SEGMENT_NAME_MAX}" required value="${m.name}"${inv(m.errors, 'name')}>
    ${err(m.errors, 'name')}
    <button type="submit">Create segment</button>
  </form>
</section>` : READ_ONLY}`;
}

/** The members form as the user filled it (the file cannot be kept by a browser). */
export interface MembersForm { mode: string; numbers: string; hashed: boolean }

/** What one segment's page shows. */
export interface SegmentViewModel {
  csrf: string;
  segment: SegmentSummary;
  members: MemberEntry[];
  /** Cursor of this page (0: the first) and of the next (null: this is the last). */
  after: number;
  next: number | null;
  membersForm: MembersForm;
  name: string;
  errors: FieldErrors;
  /** The result of the change just made (after its redirect). */
  summary?: MembershipSummary & { source: string };
  /** Whether the user's role may change segments (else the forms are left out). */
  canEdit: boolean;
  /** A dynamic segment's conditions in words (undefined: a static segment). */
  filterWords?: FilterWords;
  /** Whether the builder can show the dynamic segment's conditions (else: operator API or cms only). */
  builderEditable?: boolean;
}

function summaryView(s: MembershipSummary & { source: string }): SafeHtml {
  const add = s.mode === 'add';
  const more = s.contacts_invalid - s.invalid.length;
  return html`<section class="flash" role="status" aria-labelledby="summary-title" data-summary>
  <h2 id="summary-title">${add ? 'Members added' : 'Members removed'} <small>(from ${s.source})</small></h2>
  <dl class="facts">
    <dt>${add ? 'Added' : 'Removed'}</dt><dd data-count="processed">${n(s.contacts_processed)}</dd>
    <dt>${add ? 'Already members' : 'Were not members'}</dt><dd data-count="unchanged">${n(s.contacts_unchanged)}</dd>
    <dt>Not found among your contacts</dt><dd data-count="not_found">${n(s.contacts_not_found)}</dd>
    <dt>Invalid</dt><dd data-count="invalid">${n(s.contacts_invalid)}</dd>
  </dl>
  ${s.invalid.length ? html`<p>Invalid: ${s.invalid.map((i, k) => html`${k ? ', ' : ''}line ${i.position} (<code>${i.value}</code>)`)}${more > 0 ? html` and ${n(more)} more` : ''}.</p>` : ''}
</section>`;
}

function membersTable(m: SegmentViewModel): SafeHtml {
  const s = m.segment;
  const dynamic = m.filterWords !== undefined;
  if (s.members === 0) return dynamic ? html`<p>No contact matches the conditions now.</p>` : html`<p>This segment has no members yet.${m.canEdit ? ' Add some below.' : ''}</p>`;
  if (m.members.length === 0) return html`<p>No more members. <a href="${BASE}/segments/${s.segment_id}">Back to the first page</a></p>`;
  const name = (c: MemberEntry) => [c.first_name, c.last_name].filter(Boolean).join(' ') || '—';
  return html`<p>${n(s.members)} member${s.members === 1 ? '' : 's'}${dynamic ? ' now' : ''}, ${n(m.members.length)} on this page, in the order they became contacts.</p>
${dataTable({
    label: 'Member list',
    columns: dynamic ? [{ head: 'Phone' }, { head: 'Name' }] : [{ head: 'Phone' }, { head: 'Name' }, { head: 'Added' }],
    rows: m.members.map((c) => ({
      cells: [html`<a href="${BASE}/contacts/${encodeURIComponent(c.phone)}">${c.phone}</a>`, name(c), ...(dynamic ? [] : [time(c.added_at)])],
    })),
  })}
<nav class="pager" aria-label="Member pages">
  ${m.after > 0 ? html`<a href="${BASE}/segments/${s.segment_id}">First page</a>` : ''}
  ${m.next !== null ? html`<a href="${BASE}/segments/${s.segment_id}?after=${m.next}" rel="next">Next page</a>` : ''}
</nav>`;
}

/** One segment's page (see the module comment). */
export function segmentView(m: SegmentViewModel): SafeHtml {
  const s = m.segment;
  const dynamic = m.filterWords !== undefined;
  return html`<h1>${s.name}</h1>
${m.summary ? summaryView(m.summary) : ''}
<dl class="facts">
  <dt>Segment id</dt><dd>${s.segment_id}</dd>
  <dt>Kind</dt><dd data-kind>${dynamic ? 'dynamic: its members are the contacts that match its conditions when it is used' : 'static: members kept by hand'}</dd>
  <dt>Members</dt><dd data-members>${n(s.members)}${dynamic ? ' now' : ''}</dd>
  <dt>Created</dt><dd>${time(s.created_at)}</dd>
</dl>
${m.filterWords ? html`<section aria-labelledby="conditions-title" data-conditions>
  <h2 id="conditions-title">Conditions</h2>
  ${filterWordsView(m.filterWords)}
  ${m.canEdit ? (m.builderEditable
    ? html`<p><a href="${BASE}/segments/${s.segment_id}/filter" role="button" class="secondary">Edit conditions</a></p>`
    : html`<p class="muted">These conditions are nested or name a campaign or automation: change them with the operator API or <code>cms segment</code>.</p>`) : ''}
</section>` : ''}
<section aria-labelledby="members-title">
  <h2 id="members-title">Members</h2>
  ${membersTable(m)}
</section>
${m.canEdit ? changeForms(m, dynamic) : READ_ONLY}`;
}

/** The members (static segments), rename and delete forms of a segment's page. */
function changeForms(m: SegmentViewModel, dynamic: boolean): SafeHtml {
  const s = m.segment;
  const f = m.membersForm;
  const e = m.errors;
  const mb = MAX_UPLOAD_BYTES / 1024 / 1024;
  return html`${dynamic ? '' : html`<section aria-labelledby="change-title" class="narrow">
  <h2 id="change-title">Add or remove members</h2>
  <p>Members are your existing contacts, matched by phone number (numbers without a country code are read in your company's default country) or by the SHA-256 digest of the number in E.164 form, with or without the <code>+</code>. Numbers that are not contacts yet are counted as not found, not created.</p>
  <form method="post" action="${BASE}/segments/${s.segment_id}/members" enctype="multipart/form-data" novalidate>
    <input type="hidden" name="_csrf" value="${m.csrf}">
    <fieldset${inv(e, 'mode')}>
      <legend>Action</legend>
      <label for="mode-add"><input type="radio" id="mode-add" name="mode" value="add"${f.mode !== 'delete' ? html` checked` : ''}> Add to the segment</label>
      <label for="mode-delete"><input type="radio" id="mode-delete" name="mode" value="delete"${f.mode === 'delete' ? html` checked` : ''}> Remove from the segment</label>
      ${err(e, 'mode')}
    </fieldset>
    <label for="numbers">Phone numbers <small>(one per line, or separated by commas)</small></label>
    <textarea id="numbers" name="numbers" rows="6"${inv(e, 'numbers')}>${f.numbers}</textarea>
    ${err(e, 'numbers')}
    <label for="file">Or a CSV file <small>(UTF-8, comma-separated, at most ${mb} MiB; the column headed <code>phone</code>, or the first column)</small></label>
    <input id="file" name="file" type="file" accept=".csv,text/csv"${inv(e, 'file')}>
    ${err(e, 'file')}
    <label for="hashed"><input type="checkbox" id="hashed" name="hashed" value="on" aria-describedby="hashed-help"${f.hashed ? html` checked` : ''}> These are SHA-256 digests, not numbers</label>
    <p id="hashed-help" class="muted"><small>In a CSV file, the column headed <code>digest</code> or <code>sha256</code>, or the first column.</small></p>
    <button type="submit">Apply</button>
  </form>
</section>`}
<section aria-labelledby="rename-title" class="narrow">
  <h2 id="rename-title">Rename</h2>
  <form method="post" action="${BASE}/segments/${s.segment_id}/rename" novalidate>
    <input type="hidden" name="_csrf" value="${m.csrf}">
    <label for="name">New name</label>
    <input id="name" name="name" type="text" maxlength="${SEGMENT_NAME_MAX}" required value="${m.name}"${inv(e, 'name')}>
    ${err(e, 'name')}
    <button type="submit">Rename</button>
  </form>
</section>
<section aria-labelledby="delete-title">
  <h2 id="delete-title">Delete</h2>
  <p><a class="danger-link" href="${BASE}/segments/${s.segment_id}/delete">Delete this segment…</a></p>
</section>`;
}

/** The delete confirmation (only the facts, without the button, for a role that may not delete). */
export function deleteView(m: { csrf: string; segment: SegmentSummary; canEdit: boolean }): SafeHtml {
  const s = m.segment;
  return html`<h1>Delete segment ${s.name}?</h1>
<p>The segment and its ${n(s.members)} membership${s.members === 1 ? '' : 's'} are removed; the contacts themselves stay. Its place among your ${MAX_SEGMENTS_PER_COMPANY} segments becomes free.</p>
<p>Campaign sends already made to this segment, including scheduled ones, are not changed: they go to the members the segment had when the send was made. Cancel them in <a href="${BASE}/sends">Sends</a> if they should not go out.</p>
${m.canEdit ? html`<form method="post" action="${BASE}/segments/${s.segment_id}/delete" class="actions">
  <input type="hidden" name="_csrf" value="${m.csrf}">
  <button type="submit" class="danger">Delete segment</button>
  <a href="${BASE}/segments/${s.segment_id}">Keep it</a>
</form>` : html`${READ_ONLY}<p><a href="${BASE}/segments/${s.segment_id}">Back to the segment</a></p>`}`;
}
