/**
 * The segment builder page (routes/segment-builder.ts, the form of src/console/segment-builder.ts):
 * the name (a new segment), `all` / `any`, one fieldset per condition with labelled inputs, a button
 * to remove each row, to add one, to preview and to save, and the preview: how many contacts match
 * now and the first ten. Without script every button posts the form and the page comes back drawn
 * from it; with script (assets/segment-builder.js) rows are added and removed in the page, the
 * inputs a row does not use are hidden as its kind changes, and the preview follows the form as it
 * is edited (`POST /console/segments/preview` answers {@link previewFragment}).
 *
 * Which inputs a row shows, the comparisons it allows and the label and hint of its value travel as
 * data attributes of the kind's `<option>`, so the script holds no copy of the rules.
 */
import type { MatchingContact } from '../../db/segment-filter.ts';
import { MAX_SEGMENTS_PER_COMPANY, SEGMENT_NAME_MAX } from '../../domain/segments.ts';
import { OPS, type Op } from '../../domain/segment-filter.ts';
import { emptyRow, KINDS, kindOf, MAX_ROWS, OP_LABEL, type BuilderForm, type BuilderRow, type FilterWords, type RowError, type RowPart } from '../segment-builder.ts';
import { num, readOnlyNote } from './format.ts';
import { html, type SafeHtml } from './html.ts';
import { BASE } from './layout.ts';
import { dataTable } from './table.ts';

/** What the preview shows: a count and sample, a problem to fix first, or nothing yet. */
export type PreviewState = { count: number; sample: MatchingContact[] } | { problem: string } | undefined;

/** What the builder page shows. */
export interface BuilderViewModel {
  csrf: string;
  /** Where the form posts: `/console/segments/new` or `/console/segments/{id}/filter`. */
  action: string;
  /** The segment whose filter is edited, or undefined for a new segment. */
  segment?: { segment_id: number; name: string };
  form: BuilderForm;
  /** The problem of a row (from saving or previewing), shown beside its input. */
  rowError?: RowError;
  /** The problem of the name (new segments). */
  nameError?: string;
  preview: PreviewState;
  /** The company's static segments (for "is a member of the segment"). */
  segments: { segment_id: number; name: string }[];
  /** The company's segments count (new segments: the limit of 20). */
  segmentCount?: number;
  canEdit: boolean;
}

const n = num;

/** The ids of a row's inputs: `<part>_<index>`. */
const idOf = (part: string, i: number | string) => `${part}_${i}`;

function kindOptions(row: BuilderRow): SafeHtml {
  const groups = [...new Set(KINDS.map((k) => k.group))];
  return html`${groups.map((g) => html`<optgroup label="${g}">${KINDS.filter((k) => k.group === g).map((k) => html`<option value="${k.what}" data-parts="${k.parts.join(' ')}" data-ops="${(k.ops ?? []).join(' ')}" data-value-label="${k.valueLabel ?? ''}" data-hint="${k.hint ?? ''}"${row.what === k.what ? html` selected` : ''}>${k.label}</option>`)}</optgroup>`)}`;
}

/** One condition's fieldset; `i` is its index, or `__i__` in the template the script copies. */
function conditionRow(row: BuilderRow, i: number | string, m: BuilderViewModel, count: number): SafeHtml {
  const kind = kindOf(row.what) ?? KINDS[0];
  const shows = (p: RowPart) => kind.parts.includes(p);
  const error = typeof i === 'number' && m.rowError?.row === i ? m.rowError : undefined;
  const errId = idOf('row', i) + '-error';
  const invalid = (p: RowPart | 'what') => (error?.part === p ? html` aria-invalid="true" aria-describedby="${errId}"` : '');
  const label = typeof i === 'number' ? i + 1 : '__n__';
  const ops = kind.ops ?? OPS;
  // A comparison the row's kind does not take (its kind was changed without script) shows the first it takes.
  const op = ops.includes(row.op as Op) ? row.op : ops[0];
  const hintId = `${idOf('value', i)}-hint`;
  return html`<fieldset class="condition" data-row>
  <legend data-row-legend>Condition ${label}</legend>
  <div class="condition-fields">
    <div><label for="${idOf('what', i)}">Test</label>
      <select id="${idOf('what', i)}" name="${idOf('what', i)}" data-what${invalid('what')}>${kindOptions(row)}</select></div>
    <div data-part="name"${shows('name') ? '' : html` hidden`}><label for="${idOf('name', i)}">Variable name</label>
      <input id="${idOf('name', i)}" name="${idOf('name', i)}" type="text" maxlength="64" autocomplete="off" value="${row.name}"${invalid('name')}></div>
    <div data-part="op"${shows('op') ? '' : html` hidden`}><label for="${idOf('op', i)}">Comparison</label>
      <select id="${idOf('op', i)}" name="${idOf('op', i)}" data-op${invalid('op')}>${OPS.map((o) => html`<option value="${o}"${op === o ? html` selected` : ''}${ops.includes(o) ? '' : html` disabled`}>${OP_LABEL[o]}</option>`)}</select></div>
    <div data-part="value"${shows('value') ? '' : html` hidden`}><label for="${idOf('value', i)}" data-value-label>${kind.valueLabel ?? 'Value'}</label>
      <input id="${idOf('value', i)}" name="${idOf('value', i)}" type="text" maxlength="1000" autocomplete="off" value="${row.value}" aria-describedby="${hintId}${error?.part === 'value' ? ` ${errId}` : ''}"${error?.part === 'value' ? html` aria-invalid="true"` : ''}>
      <small id="${hintId}" class="muted" data-value-hint>${kind.hint ?? ''}</small></div>
    <div data-part="segment"${shows('segment') ? '' : html` hidden`}><label for="${idOf('segment', i)}">Segment</label>
      <select id="${idOf('segment', i)}" name="${idOf('segment', i)}"${invalid('segment')}>
        <option value="">${m.segments.length ? 'Choose a segment' : 'No static segments yet'}</option>
        ${m.segments.map((s) => html`<option value="${s.segment_id}"${row.segment === String(s.segment_id) ? html` selected` : ''}>${s.name} (#${s.segment_id})</option>`)}
      </select></div>
  </div>
  ${error ? html`<small id="${errId}" class="error" role="alert" data-row-error>${error.message}</small>` : ''}
  <label for="${idOf('not', i)}" class="negate"><input type="checkbox" id="${idOf('not', i)}" name="${idOf('not', i)}" value="on"${row.not ? html` checked` : ''}> Not: match the contacts for whom this is false</label>
  <button type="submit" name="action" value="remove:${i}" class="secondary outline small" data-remove${count <= 1 ? html` hidden` : ''}>Remove condition ${label}</button>
</fieldset>`;
}

function sampleTable(sample: MatchingContact[]): SafeHtml {
  if (!sample.length) return html``;
  return dataTable({
    label: 'First matching contacts',
    columns: [{ head: 'Phone' }, { head: 'Name' }],
    rows: sample.map((c) => ({ cells: [html`<a href="${BASE}/contacts/${encodeURIComponent(c.phone)}">${c.phone}</a>`, [c.first_name, c.last_name].filter(Boolean).join(' ') || '—'] })),
  });
}

/** The preview's sentence: the count, the problem to fix, or how to start. */
function previewSentence(p: PreviewState): string {
  if (p === undefined) return 'Complete a condition to see how many contacts match.';
  if ('problem' in p) return `Not counted: ${p.problem}`;
  if (p.count === 0) return 'No contact matches now.';
  return `${n(p.count)} contact${p.count === 1 ? ' matches' : 's match'} now.${p.count > p.sample.length ? ` The first ${n(p.sample.length)} are listed below.` : ''}`;
}

/**
 * What `POST /console/segments/preview` answers: the sentence (`data-preview-count`, with the count
 * in `data-count`) and the sample, which the script moves into the page.
 */
export function previewFragment(p: PreviewState): SafeHtml {
  const count = p && 'count' in p ? String(p.count) : '';
  return html`<p data-preview-count data-count="${count}">${previewSentence(p)}</p><div data-preview-sample>${p && 'sample' in p ? sampleTable(p.sample) : ''}</div>`;
}

/** The builder page's body (see the module comment). */
export function builderView(m: BuilderViewModel): SafeHtml {
  const f = m.form;
  const isNew = m.segment === undefined;
  const full = isNew && (m.segmentCount ?? 0) >= MAX_SEGMENTS_PER_COMPANY;
  const intro = html`<p>A dynamic segment's members are the contacts that match its conditions at the moment it is used: a campaign send takes the contacts that match when it is made. ${isNew ? html`It counts toward the ${MAX_SEGMENTS_PER_COMPANY} segments of a company (you have ${m.segmentCount ?? 0}).` : ''}</p>`;
  if (!m.canEdit) return html`<h1>${isNew ? 'New dynamic segment' : `Conditions of ${m.segment!.name}`}</h1>${intro}${readOnlyNote('segments')}`;
  const rowCount = f.rows.length;
  const nameErr = m.nameError ? html`<small id="seg-name-error" class="error" role="alert">${m.nameError}</small>` : '';
  const p = m.preview;
  const count = p && 'count' in p ? String(p.count) : '';
  return html`<h1>${isNew ? 'New dynamic segment' : html`Conditions of ${m.segment!.name}`}</h1>
${intro}
${full ? html`<p class="muted">You have ${MAX_SEGMENTS_PER_COMPANY} segments, the most a company can hold: delete one to save another.</p>` : ''}
<form method="post" action="${m.action}" novalidate class="builder" data-segment-builder data-preview-url="${BASE}/segments/preview" data-max-rows="${MAX_ROWS}">
  <input type="hidden" name="_csrf" value="${m.csrf}">
  <button type="submit" name="action" value="preview" class="default-action" tabindex="-1" aria-hidden="true">Preview</button>
  ${isNew ? html`<div class="narrow"><label for="seg-name">Name</label>
  <input id="seg-name" name="name" type="text" maxlength="${SEGMENT_NAME_MAX}" required value="${f.name}"${m.nameError ? html` aria-invalid="true" aria-describedby="seg-name-error"` : ''}>
  ${nameErr}</div>` : ''}
  <fieldset class="match">
    <legend>Contacts match when</legend>
    <label for="match-all"><input type="radio" id="match-all" name="match" value="all"${f.match === 'all' ? html` checked` : ''}> all conditions are true</label>
    <label for="match-any"><input type="radio" id="match-any" name="match" value="any"${f.match === 'any' ? html` checked` : ''}> any condition is true</label>
  </fieldset>
  <div data-rows>
    ${f.rows.map((row, i) => conditionRow(row, i, m, rowCount))}
  </div>
  <p class="muted" data-rows-note>At most ${MAX_ROWS} conditions.</p>
  <noscript><p class="muted">After changing what a condition tests, press Preview to show the inputs it needs.</p></noscript>
  <div class="builder-bar">
    <p role="status" data-preview-status data-count="${count}">${previewSentence(p)}</p>
    <div class="actions">
      <button type="submit" name="action" value="add" class="secondary" data-add${rowCount >= MAX_ROWS ? html` disabled` : ''}>Add a condition</button>
      <button type="submit" name="action" value="preview" class="secondary" data-preview>Preview</button>
      <button type="submit" name="action" value="save" data-save>${isNew ? 'Save segment' : 'Save conditions'}</button>
      ${isNew ? html`<a href="${BASE}/segments">Cancel</a>` : html`<a href="${BASE}/segments/${m.segment!.segment_id}">Cancel</a>`}
    </div>
  </div>
  <p class="visually-hidden" role="status" data-builder-announce></p>
</form>
<template id="condition-template">${conditionRow(emptyRow(), '__i__', { ...m, rowError: undefined }, 2)}</template>
<section aria-labelledby="preview-h" class="builder-preview">
  <h2 id="preview-h">Matching contacts</h2>
  <div data-preview-sample>${p && 'sample' in p ? sampleTable(p.sample) : html`<p class="muted">The first ten matching contacts are shown here.</p>`}</div>
</section>`;
}

/** A stored filter in words (describeFilter) as nested lists. */
export function filterWordsView(w: FilterWords): SafeHtml {
  return html`<ul class="filter-words"><li>${w.text}${w.parts ? filterWordsView0(w.parts) : ''}</li></ul>`;
}

function filterWordsView0(parts: FilterWords[]): SafeHtml {
  return html`<ul>${parts.map((p) => html`<li>${p.text}${p.parts ? filterWordsView0(p.parts) : ''}</li>`)}</ul>`;
}
