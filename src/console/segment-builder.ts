/**
 * The console's segment builder as a form (docs/audience.md "The segment builder"): rows of one
 * condition each, joined by `all` or `any`, turned into a filter of the filter language
 * (src/domain/segment-filter.ts) and back. The form works as a plain HTML form: every row's inputs
 * are named with the row's index (`what_0`, `name_0`, `op_0`, `value_0`, `segment_0`, `not_0`), so a
 * browser without script posts the whole builder with each button (add a row, remove one, preview,
 * save) and the page is drawn again from what it sent.
 *
 * A row tests one thing (`what`, see {@link KINDS}): a variable (`attribute`, with its name), a field
 * (`field:<name>`), the opt-out state (`opted_out` / `subscribed`), a tag, a message outcome within a
 * time (`message:<status>`), a reply within a time (`replied`) or a static segment (`segment`);
 * `not_i` negates it. The filter is `{"all" | "any": [condition or {"not": condition}, ...]}`, so a
 * problem the filter language finds (its `loc`) names the row: `[match, i, ...]`.
 *
 * Only filters of that shape can be edited here ({@link rowsOfFilter}); others (nested groups, a
 * `campaign_id`) are shown in words ({@link describeFilter}) and changed through the operator API or
 * `cms`.
 */
import { FIELDS, MAX_CONDITIONS, MESSAGE_STATUSES, OPS, TEXT_FIELDS, TIME_FIELDS, type Op } from '../domain/segment-filter.ts';

/** One row of the builder as the form holds it (all texts, as typed). */
export interface BuilderRow { what: string; name: string; op: string; value: string; segment: string; not: boolean }

/** The whole builder form: the segment's name (new segments only), how rows combine, the rows. */
export interface BuilderForm { name: string; match: 'all' | 'any'; rows: BuilderRow[] }

/** Most rows a builder holds: the filter language's limit of conditions. */
export const MAX_ROWS = MAX_CONDITIONS;

/** Parts of a row an input kind shows. */
export type RowPart = 'name' | 'op' | 'value' | 'segment';

/** What a row can test: its label, group, parts, allowed comparisons, and how its value is asked for. */
export interface RowKind {
  what: string;
  label: string;
  group: string;
  parts: RowPart[];
  ops?: readonly Op[];
  valueLabel?: string;
  hint?: string;
}

const TIME_OPS: readonly Op[] = ['gt', 'gte', 'lt', 'lte', 'exists', 'not_exists'];
const TEXT_OPS: readonly Op[] = OPS.filter((o) => o !== 'gt' && o !== 'gte' && o !== 'lt' && o !== 'lte');
const DURATION_HINT = 'A number and m, h or d: 30d is 30 days.';
const TIME_HINT = 'A date (2026-03-01), a date and time with Z or an offset, or a time back from now: -7d is 7 days ago.';
const FIELD_LABEL: Record<string, string> = {
  first_name: 'First name', last_name: 'Last name', phone: 'Phone number', country: 'Country of the number',
  created_at: 'Became a contact', last_inbound_at: 'Last message in', last_sent_at: 'Last message sent to it',
  last_delivered_at: 'Last message delivered', last_read_at: 'Last message read',
};

/** Every kind of row, in the order the select offers them. */
export const KINDS: readonly RowKind[] = [
  { what: 'attribute', label: 'Variable…', group: 'Contact', parts: ['name', 'op', 'value'], ops: OPS, valueLabel: 'Value', hint: 'Several values for "is one of": separate them with commas. Numbers compare as numbers.' },
  ...TEXT_FIELDS.map((f): RowKind => ({
    what: `field:${f}`, label: FIELD_LABEL[f], group: 'Contact', parts: ['op', 'value'], ops: TEXT_OPS, valueLabel: 'Value',
    hint: f === 'country' ? 'Two letters, like DE. Several for "is one of": separate them with commas.' : f === 'phone' ? 'In E.164 form, like +4915112345678.' : 'Several values for "is one of": separate them with commas.',
  })),
  { what: 'opted_out', label: 'Is opted out of campaigns', group: 'Contact', parts: [] },
  { what: 'subscribed', label: 'Is not opted out', group: 'Contact', parts: [] },
  { what: 'tag', label: 'Has the tag', group: 'Tags and segments', parts: ['value'], valueLabel: 'Tag', hint: 'The whole tag, as written on the contacts.' },
  { what: 'segment', label: 'Is a member of the segment', group: 'Tags and segments', parts: ['segment'] },
  ...TIME_FIELDS.map((f): RowKind => ({ what: `field:${f}`, label: FIELD_LABEL[f], group: 'Times', parts: ['op', 'value'], ops: TIME_OPS, valueLabel: 'Time', hint: TIME_HINT })),
  ...MESSAGE_STATUSES.map((st): RowKind => ({
    what: `message:${st}`, label: `Message ${st} within`,
    group: 'Messages', parts: ['value'], valueLabel: 'Within', hint: DURATION_HINT,
  })),
  { what: 'replied', label: 'Wrote to you within', group: 'Messages', parts: ['value'], valueLabel: 'Within', hint: DURATION_HINT },
];

const KIND_BY_WHAT = new Map(KINDS.map((k) => [k.what, k]));

/** The kind of a row's `what`, or undefined for an unknown one. */
export function kindOf(what: string): RowKind | undefined {
  return KIND_BY_WHAT.get(what);
}

/** Words for each comparison. */
export const OP_LABEL: Record<Op, string> = {
  eq: 'is', ne: 'is not', in: 'is one of', not_in: 'is none of', contains: 'contains', starts_with: 'starts with',
  exists: 'is set', not_exists: 'is not set', gt: 'is after / more than', gte: 'is on or after / at least', lt: 'is before / less than', lte: 'is on or before / at most',
};

/** A fresh row (a variable, compared with `is`). */
export function emptyRow(): BuilderRow {
  return { what: 'attribute', name: '', op: 'eq', value: '', segment: '', not: false };
}

const text = (body: Record<string, unknown>, key: string, max = 1000) => {
  const v = body[key];
  return typeof v === 'string' ? v.slice(0, max) : '';
};

/**
 * The builder form from a posted body: the rows are the indexes that have a `what_<i>`, in index
 * order (at most MAX_ROWS; at least one, an empty row when none was sent).
 */
export function readBuilderForm(body: unknown): BuilderForm {
  const b = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
  const indexes = Object.keys(b).flatMap((k) => {
    const m = /^what_([0-9]{1,3})$/.exec(k);
    return m ? [Number(m[1])] : [];
  }).sort((x, y) => x - y).slice(0, MAX_ROWS);
  const rows = indexes.map((i): BuilderRow => ({
    what: text(b, `what_${i}`, 64), name: text(b, `name_${i}`, 200), op: text(b, `op_${i}`, 32), value: text(b, `value_${i}`),
    segment: text(b, `segment_${i}`, 16), not: b[`not_${i}`] === 'on',
  }));
  return { name: text(b, 'name', 1000), match: b.match === 'any' ? 'any' : 'all', rows: rows.length ? rows : [emptyRow()] };
}

/** A problem of one row: the row's index and the part to show it beside. */
export interface RowError { row: number; part: RowPart | 'what'; message: string }

/** Outcome of turning a form into a filter. */
export type BuiltFilter = { filter: Record<string, unknown> } | { error: RowError };

const list = (v: string) => v.split(',').map((x) => x.trim()).filter((x) => x !== '');
const NUMBER = /^-?[0-9]+(\.[0-9]+)?$/;

/** One row as a condition (without its negation), or the problem with it. */
function conditionOf(row: BuilderRow, i: number): Record<string, unknown> | RowError {
  const kind = kindOf(row.what);
  if (!kind) return { row: i, part: 'what', message: 'Choose what this condition tests.' };
  const value = row.value.trim();
  const op = row.op as Op;
  const compared = (key: 'attribute' | 'field', subject: string): Record<string, unknown> | RowError => {
    if (!kind.ops?.includes(op)) return { row: i, part: 'op', message: `Choose a comparison (${kind.ops?.map((o) => OP_LABEL[o]).join(', ')}).` };
    const c: Record<string, unknown> = { [key]: subject, op };
    if (op === 'exists' || op === 'not_exists') return c;
    if (value === '') return { row: i, part: 'value', message: 'Enter a value.' };
    if (op === 'in' || op === 'not_in') {
      const values = list(value);
      if (values.length === 0) return { row: i, part: 'value', message: 'Enter one or more values, separated by commas.' };
      c.value = key === 'field' && subject === 'country' ? values.map((x) => x.toUpperCase()) : values;
    } else if (key === 'attribute' && (op === 'gt' || op === 'gte' || op === 'lt' || op === 'lte') && NUMBER.test(value)) {
      c.value = Number(value);
    } else {
      c.value = key === 'field' && subject === 'country' ? value.toUpperCase() : value;
    }
    return c;
  };
  if (kind.what === 'attribute') {
    const name = row.name.trim();
    if (name === '') return { row: i, part: 'name', message: 'Enter the name of the variable.' };
    return compared('attribute', name);
  }
  if (kind.what.startsWith('field:')) {
    return compared('field', kind.what.slice(6));
  }
  if (kind.what === 'opted_out') return { field: 'opted_out', op: 'eq', value: true };
  if (kind.what === 'subscribed') return { field: 'opted_out', op: 'eq', value: false };
  if (kind.what === 'tag') return value === '' ? { row: i, part: 'value', message: 'Enter a tag.' } : { tag: value };
  if (kind.what === 'segment') {
    return /^[0-9]{1,10}$/.test(row.segment) ? { segment: Number(row.segment) } : { row: i, part: 'segment', message: 'Choose a segment.' };
  }
  const within = value.replace(/\s+/g, '').toLowerCase();
  if (within === '') return { row: i, part: 'value', message: 'Enter a time span, like 30d.' };
  if (kind.what === 'replied') return { replied_within: within };
  return { message: kind.what.slice(8), within };
}

const isRowError = (x: unknown): x is RowError => typeof x === 'object' && x !== null && 'row' in x && 'message' in x;

/** The filter of the form (`{all|any: [...]}`), or the first row's problem the form itself shows. */
export function filterOfForm(form: BuilderForm): BuiltFilter {
  const parts: Record<string, unknown>[] = [];
  for (const [i, row] of form.rows.entries()) {
    const c = conditionOf(row, i);
    if (isRowError(c)) return { error: c };
    parts.push(row.not ? { not: c } : c);
  }
  return { filter: { [form.match]: parts } };
}

const PART_OF_KEY: Record<string, RowPart | 'what'> = {
  attribute: 'name', op: 'op', value: 'value', tag: 'value', within: 'value', replied_within: 'value', segment: 'segment', field: 'what', message: 'what',
};

/**
 * The row and part a problem the filter language found (`loc` inside the filter the form made, see
 * the module comment) belongs to; row 0 when the place is not inside a row.
 */
export function rowErrorOfLoc(loc: (string | number)[], message: string): RowError {
  const row = typeof loc[1] === 'number' ? loc[1] : 0;
  const key = [...loc].reverse().find((k) => typeof k === 'string' && k !== 'not' && k !== 'all' && k !== 'any') as string | undefined;
  return { row, part: (key && PART_OF_KEY[key]) || 'what', message: message.charAt(0).toUpperCase() + message.slice(1) + '.' };
}

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown) => (Array.isArray(v) ? v.map((x) => String(x)).join(', ') : v === undefined || v === null ? '' : String(v));

/** A stored condition as a row, or undefined when the builder cannot show it. */
function rowOfCondition(c: unknown, not: boolean): BuilderRow | undefined {
  if (!isObj(c)) return undefined;
  const row = { ...emptyRow(), not };
  if (typeof c.attribute === 'string') return { ...row, what: 'attribute', name: c.attribute, op: String(c.op), value: str(c.value) };
  if (c.field === 'opted_out') {
    const yes = (c.op === 'eq') === (c.value === true);
    return { ...row, what: yes ? 'opted_out' : 'subscribed' };
  }
  if (typeof c.field === 'string' && (FIELDS as readonly string[]).includes(c.field)) return { ...row, what: `field:${c.field}`, op: String(c.op), value: str(c.value) };
  if (typeof c.tag === 'string') return { ...row, what: 'tag', value: c.tag };
  if (typeof c.segment === 'number') return { ...row, what: 'segment', segment: String(c.segment) };
  if (typeof c.replied_within === 'string') return { ...row, what: 'replied', value: c.replied_within };
  if (typeof c.message === 'string' && c.campaign_id === undefined && c.automation_id === undefined) return { ...row, what: `message:${c.message}`, value: str(c.within) };
  return undefined;
}

/**
 * The builder's rows and join of a stored filter: `{all|any: [condition or {not: condition}, ...]}`
 * or a single condition (or its `not`); undefined for any other shape (see the module comment).
 */
export function rowsOfFilter(filter: unknown): { match: 'all' | 'any'; rows: BuilderRow[] } | undefined {
  if (!isObj(filter)) return undefined;
  const match = Array.isArray(filter.all) ? 'all' : Array.isArray(filter.any) ? 'any' : undefined;
  const parts = match ? (filter[match] as unknown[]) : [filter];
  if (parts.length === 0 || parts.length > MAX_ROWS) return undefined;
  const rows: BuilderRow[] = [];
  for (const p of parts) {
    const negated = isObj(p) && 'not' in p && Object.keys(p).length === 1;
    const row = rowOfCondition(negated ? (p as { not: unknown }).not : p, negated);
    if (!row) return undefined;
    rows.push(row);
  }
  return { match: match ?? 'all', rows };
}

/** A stored filter in words, as nested lines: each a sentence, groups with their parts below. */
export interface FilterWords { text: string; parts?: FilterWords[] }

const quote = (v: unknown) => (Array.isArray(v) ? v.map((x) => JSON.stringify(x)).join(', ') : JSON.stringify(v));

/** Describes a stored filter in words (any shape the filter language takes); `segmentName` names segment ids. */
export function describeFilter(filter: unknown, segmentName: (id: number) => string | undefined = () => undefined): FilterWords {
  if (!isObj(filter)) return { text: 'an unreadable filter' };
  if (Array.isArray(filter.all)) return { text: 'All of these are true:', parts: filter.all.map((p) => describeFilter(p, segmentName)) };
  if (Array.isArray(filter.any)) return { text: 'Any of these is true:', parts: filter.any.map((p) => describeFilter(p, segmentName)) };
  if ('not' in filter) {
    const inner = describeFilter(filter.not, segmentName);
    return inner.parts ? { text: 'Not this:', parts: [inner] } : { text: `Not: ${inner.text.charAt(0).toLowerCase()}${inner.text.slice(1)}` };
  }
  const c = filter;
  const compared = (subject: string) => {
    const op = OP_LABEL[c.op as Op] ?? String(c.op);
    return c.op === 'exists' || c.op === 'not_exists' ? `${subject} ${op}` : `${subject} ${op} ${quote(c.value)}`;
  };
  if (typeof c.attribute === 'string') return { text: compared(`Variable ${c.attribute}`) };
  if (c.field === 'opted_out') return { text: (c.op === 'eq') === (c.value === true) ? 'Is opted out of campaigns' : 'Is not opted out' };
  if (typeof c.field === 'string') return { text: compared(FIELD_LABEL[c.field] ?? c.field) };
  if (typeof c.tag === 'string') return { text: `Has the tag ${JSON.stringify(c.tag)}` };
  if (typeof c.segment === 'number') {
    const name = segmentName(c.segment);
    return { text: `Is a member of the segment ${name === undefined ? `#${c.segment}` : `${JSON.stringify(name)} (#${c.segment})`}` };
  }
  if (typeof c.replied_within === 'string') return { text: `Wrote to you within ${c.replied_within}` };
  if (typeof c.message === 'string') {
    const kind = kindOf(`message:${c.message}`);
    const source = c.campaign_id !== undefined ? `, from campaign #${str(c.campaign_id)}` : c.automation_id !== undefined ? `, from automation #${str(c.automation_id)}` : '';
    return { text: `${kind?.label ?? `Message ${c.message} within`} ${str(c.within)}${source}` };
  }
  return { text: 'an unknown condition' };
}
