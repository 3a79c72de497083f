/**
 * The filter language of dynamic segments (docs/segments.md "The filter language"): reads a filter
 * given as JSON into a checked tree ({@link FilterNode}) or refuses it with a {@link FilterError} that
 * names the place (`loc`, the path of keys and indexes inside the filter) and the reason. The tree is
 * compiled into one parameterised SQL expression by src/db/segment-filter.ts; nothing of the filter is
 * ever spliced into SQL text.
 *
 * Limits: at most MAX_CONDITIONS conditions (leaves) and depth MAX_DEPTH (the filter itself is at
 * depth 1, each `all` / `any` / `not` puts its parts one deeper); `all` / `any` hold 1 to
 * MAX_CONDITIONS parts; `in` / `not_in` 1 to MAX_LIST values; texts at most MAX_TEXT characters.
 * Durations are a positive integer and a unit `m`, `h` or `d` (`30d`), at most MAX_DURATION_DAYS days;
 * a time value is an ISO 8601 date (`2026-03-01`, midnight UTC) or date-time with `Z` or an offset, or
 * relative: `-` and a duration (`-7d`: seven days before the evaluation).
 *
 * Work (docs/segments.md "Limits"): every condition is evaluated once per contact, so a filter's cost
 * is bounded by its conditions' costs ({@link conditionCost}): at most MAX_FILTER_COST units in all,
 * and at most MAX_LIST_TOTAL values in all its `in` / `not_in` lists. The weights were measured on the
 * embedded database (100,000 contacts with 5 messages each: docs/benchmarks.md "Filter previews").
 */
import { DomainError } from './errors.ts';

export const MAX_CONDITIONS = 50;
export const MAX_DEPTH = 5;
export const MAX_LIST = 100;
export const MAX_TEXT = 1000;
/** Most values of all `in` / `not_in` lists of one filter together. */
export const MAX_LIST_TOTAL = 1000;
/** Longest duration (and relative time) of a filter, in days (100 years). */
export const MAX_DURATION_DAYS = 36_500;
/** Most work units one filter may cost (see {@link conditionCost}). */
export const MAX_FILTER_COST = 50;
/**
 * Work units of the kinds of condition, each about its time per contact relative to the costliest
 * plain comparison (measured on the embedded database, 100,000 contacts with 5 messages each:
 * docs/benchmarks.md "Filter previews"; a unit is about 10-20 ms there).
 */
export const COST = {
  /** A field, a tag, opted_out, replied_within, an attribute compared as text or for existence, a list of texts. */
  plain: 1,
  /** A `segment` condition (a probe of its members). */
  segment: 6,
  /** An attribute compared with a number or a list of numbers: its text read as a number, per contact. */
  number: 8,
  /** An attribute compared with a time: its text read as a time, per contact. */
  time: 25,
  /** last_sent_at, last_delivered_at, last_read_at: a sub-select over the contact's messages. */
  messageTime: 40,
  /** A `message` condition: a sub-select over the contact's messages (and their batches). */
  message: 40,
} as const;

/** A comparison operator. */
export type Op = 'eq' | 'ne' | 'in' | 'not_in' | 'contains' | 'starts_with' | 'exists' | 'not_exists' | 'gt' | 'gte' | 'lt' | 'lte';
export const OPS: readonly Op[] = ['eq', 'ne', 'in', 'not_in', 'contains', 'starts_with', 'exists', 'not_exists', 'gt', 'gte', 'lt', 'lte'];

/** Fields by kind. */
export const TEXT_FIELDS = ['first_name', 'last_name', 'phone', 'country'] as const;
export const TIME_FIELDS = ['created_at', 'last_inbound_at', 'last_sent_at', 'last_delivered_at', 'last_read_at'] as const;
export const FIELDS = [...TEXT_FIELDS, ...TIME_FIELDS, 'opted_out'] as const;
export type TextField = typeof TEXT_FIELDS[number];
export type TimeField = typeof TIME_FIELDS[number];
export const MESSAGE_STATUSES = ['sent', 'delivered', 'read', 'failed'] as const;

/** A time value: absolute (ms since the epoch) or relative (ms before the evaluation). */
export type TimeValue = { at: number } | { ago: number };

/** A value a comparison compares with, typed by how it compares. */
export type Scalar = { num: number } | { text: string } | { time: TimeValue };

/** A checked condition. */
export type Condition =
  | { kind: 'attribute'; name: string; op: Op; values: Scalar[] }
  | { kind: 'text'; field: TextField; op: Op; values: Scalar[] }
  | { kind: 'time'; field: TimeField; op: Op; values: Scalar[] }
  | { kind: 'opted_out'; op: 'eq' | 'ne'; value: boolean }
  | { kind: 'tag'; tag: string }
  | { kind: 'segment'; segment_id: number }
  | { kind: 'message'; status: typeof MESSAGE_STATUSES[number]; within: number; campaign_id?: number; automation_id?: number }
  | { kind: 'replied'; within: number };

/** A checked filter. */
export type FilterNode = { all: FilterNode[] } | { any: FilterNode[] } | { not: FilterNode } | Condition;

/** A refused filter: where (`loc`, inside the filter) and why. */
export class FilterError extends DomainError {
  readonly loc: (string | number)[];
  constructor(loc: (string | number)[], reason: string) {
    super(422, reason);
    this.loc = loc;
  }
}

const UNIT_MS = { m: 60_000, h: 3_600_000, d: 86_400_000 } as const;
const DURATION = /^([1-9][0-9]{0,7})([mhd])$/;
const RELATIVE = /^-([1-9][0-9]{0,7})([mhd])$/;
const MAX_DURATION_MS = MAX_DURATION_DAYS * UNIT_MS.d;
const DATE = /^[0-9]{4}-[0-9]{2}-[0-9]{2}$/;
const DATE_TIME = /^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}(:[0-9]{2}(\.[0-9]{1,6})?)?(Z|[+-][0-9]{2}:[0-9]{2})$/;

/** A duration (`30d`) in ms, or undefined when malformed or longer than MAX_DURATION_DAYS. */
export function durationMs(text: unknown): number | undefined {
  const m = typeof text === 'string' ? DURATION.exec(text) : null;
  const ms = m ? Number(m[1]) * UNIT_MS[m[2] as keyof typeof UNIT_MS] : undefined;
  return ms !== undefined && ms <= MAX_DURATION_MS ? ms : undefined;
}

const BAD_DURATION = `bad duration: a positive integer and m, h or d, like "30d", at most ${MAX_DURATION_DAYS}d`;

/**
 * A text as a time in ms, the way the database's `cms_text_time` reads it (migration 026): an ISO
 * date (midnight UTC) or a date-time with `Z` or an offset whose parts are in range; else undefined.
 */
export function textTime(text: string): number | undefined {
  let iso = text;
  if (DATE.test(text)) iso = `${text}T00:00:00Z`;
  else if (!DATE_TIME.test(text)) return undefined;
  const [y, mo, d] = iso.slice(0, 10).split('-').map(Number);
  const [h, mi, s] = [Number(iso.slice(11, 13)), Number(iso.slice(14, 16)), iso[16] === ':' ? Number(iso.slice(17, 19)) : 0];
  if (mo < 1 || mo > 12 || d < 1 || d > new Date(Date.UTC(y, mo, 0)).getUTCDate() || h > 23 || mi > 59 || s > 59 || y < 1) return undefined;
  const off = /([+-])([0-9]{2}):([0-9]{2})$/.exec(iso);
  if (off && (Number(off[2]) > 15 || Number(off[3]) > 59)) return undefined;
  const ms = Date.parse(iso);
  return Number.isFinite(ms) ? ms : undefined;
}

/** The first and last ms of years 1 to 9999 (UTC): the times the database reads back from ISO text. */
const FIRST_MS = new Date(0).setUTCFullYear(1, 0, 1);
const LAST_MS = new Date(0).setUTCFullYear(10_000, 0, 1) - 1;

/** A time value (absolute, within years 1 to 9999 in UTC, or relative), or undefined. */
function timeValue(v: unknown): TimeValue | undefined {
  if (typeof v !== 'string') return undefined;
  const rel = RELATIVE.exec(v);
  if (rel) {
    const ago = Number(rel[1]) * UNIT_MS[rel[2] as keyof typeof UNIT_MS];
    return ago <= MAX_DURATION_MS ? { ago } : undefined;
  }
  const at = textTime(v);
  // An offset may move a date at the edge of the calendar (9999-12-31T23:59-15:00) outside it.
  return at === undefined || at < FIRST_MS || at > LAST_MS ? undefined : { at };
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const describe = (v: unknown) => (v === null ? 'null' : Array.isArray(v) ? 'a list' : typeof v === 'object' ? 'an object' : typeof v === 'string' ? 'a string' : typeof v === 'number' ? 'a number' : typeof v);

function text(v: unknown, loc: (string | number)[], what: string, max = MAX_TEXT): string {
  if (typeof v !== 'string') throw new FilterError(loc, `${what} must be a string, not ${describe(v)}`);
  const n = [...v].length;
  if (n < 1 || n > max) throw new FilterError(loc, `${what} must have 1 to ${max} characters (has ${n})`);
  if (v.includes('\u0000')) throw new FilterError(loc, `${what} must not contain U+0000`);
  return v;
}

function rowId(v: unknown, loc: (string | number)[], what: string): number {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 1 || v > 2147483647) throw new FilterError(loc, `${what} must be a positive integer`);
  return v;
}

function checkKeys(o: Record<string, unknown>, loc: (string | number)[], allowed: string[]): void {
  for (const k of Object.keys(o)) if (!allowed.includes(k)) throw new FilterError([...loc, k], `unknown key "${k.slice(0, 64)}" (this condition takes ${allowed.map((a) => `"${a}"`).join(', ')})`);
}

/**
 * The values of a comparison `op` against an attribute (`attribute: true`) or a text / time field,
 * typed: `eq`/`ne` a number, string or boolean (attribute) or a string (text field); `in`/`not_in` a
 * list of those; `contains`/`starts_with` a string; `gt`.. a number, a time or a string (attribute),
 * a string (text field) or a time (time field); `exists`/`not_exists` no value.
 */
function values(kind: 'attribute' | 'text' | 'time', op: Op, c: Record<string, unknown>, loc: (string | number)[]): Scalar[] {
  const at = [...loc, 'value'];
  const has = Object.hasOwn(c, 'value');
  if (op === 'exists' || op === 'not_exists') {
    if (has) throw new FilterError(at, `"${op}" takes no value`);
    return [];
  }
  if (!has) throw new FilterError(at, `"${op}" needs a value`);
  const v = c.value;
  const one = (x: unknown, where: (string | number)[]): Scalar => {
    if (kind === 'time') {
      const t = timeValue(x);
      if (!t) throw new FilterError(where, `"${op}" on a time needs a time: an ISO 8601 date or date-time with Z or an offset within years 1 to 9999 (UTC), or relative like "-7d" (at most -${MAX_DURATION_DAYS}d) (got ${describe(x)}${typeof x === 'string' ? ` "${x.slice(0, 40)}"` : ''})`);
      return { time: t };
    }
    const ordered = op === 'gt' || op === 'gte' || op === 'lt' || op === 'lte';
    if (kind === 'attribute' && typeof x === 'number' && Number.isFinite(x) && (op !== 'contains' && op !== 'starts_with')) return { num: x };
    if (kind === 'attribute' && typeof x === 'boolean' && !ordered && op !== 'contains' && op !== 'starts_with') return { text: String(x) };
    if (typeof x === 'string') {
      if (kind === 'attribute' && ordered) {
        const t = timeValue(x);
        if (t) return { time: t };
        // Shaped like a relative time but longer than allowed: refused, not compared as text.
        if (/^-[0-9]+[mhd]$/.test(x)) throw new FilterError(where, `a relative time is at most -${MAX_DURATION_DAYS}d (got "${x.slice(0, 40)}")`);
      }
      return { text: text(x, where, 'the value') };
    }
    const allowed = kind === 'text' || op === 'contains' || op === 'starts_with' ? 'a string' : ordered ? 'a number, a time or a string' : 'a string, a number or a boolean';
    throw new FilterError(where, `"${op}" needs ${allowed} (got ${describe(x)})`);
  };
  if (op === 'in' || op === 'not_in') {
    if (!Array.isArray(v) || v.length < 1 || v.length > MAX_LIST) throw new FilterError(at, `"${op}" needs a list of 1 to ${MAX_LIST} values (got ${Array.isArray(v) ? `${v.length} values` : describe(v)})`);
    return v.map((x, i) => one(x, [...at, i]));
  }
  return [one(v, at)];
}

function op(v: unknown, loc: (string | number)[], allowed: readonly Op[], what: string): Op {
  if (typeof v !== 'string' || !(OPS as readonly string[]).includes(v)) throw new FilterError([...loc, 'op'], `unknown op ${typeof v === 'string' ? `"${v.slice(0, 40)}"` : describe(v)} (one of ${OPS.join(', ')})`);
  if (!allowed.includes(v as Op)) throw new FilterError([...loc, 'op'], `"${v}" does not apply to ${what} (use ${allowed.join(', ')})`);
  return v as Op;
}

function condition(c: Record<string, unknown>, loc: (string | number)[]): Condition {
  if ('attribute' in c) {
    checkKeys(c, loc, ['attribute', 'op', 'value']);
    const name = text(c.attribute, [...loc, 'attribute'], 'an attribute name', 64);
    const o = op(c.op, loc, OPS, 'an attribute');
    return { kind: 'attribute', name, op: o, values: values('attribute', o, c, loc) };
  }
  if ('field' in c) {
    checkKeys(c, loc, ['field', 'op', 'value']);
    const f = c.field;
    if (typeof f !== 'string' || !(FIELDS as readonly string[]).includes(f)) throw new FilterError([...loc, 'field'], `unknown field ${typeof f === 'string' ? `"${f.slice(0, 40)}"` : describe(f)} (one of ${FIELDS.join(', ')})`);
    if (f === 'opted_out') {
      const o = op(c.op, loc, ['eq', 'ne'], 'opted_out');
      if (typeof c.value !== 'boolean') throw new FilterError([...loc, 'value'], `opted_out compares with true or false (got ${describe(c.value)})`);
      return { kind: 'opted_out', op: o as 'eq' | 'ne', value: c.value };
    }
    if ((TIME_FIELDS as readonly string[]).includes(f)) {
      const o = op(c.op, loc, ['gt', 'gte', 'lt', 'lte', 'exists', 'not_exists'], `the time ${f}`);
      return { kind: 'time', field: f as TimeField, op: o, values: values('time', o, c, loc) };
    }
    const o = op(c.op, loc, OPS, f);
    return { kind: 'text', field: f as TextField, op: o, values: values('text', o, c, loc) };
  }
  if ('tag' in c) {
    checkKeys(c, loc, ['tag']);
    return { kind: 'tag', tag: text(c.tag, [...loc, 'tag'], 'a tag', 64) };
  }
  if ('segment' in c) {
    checkKeys(c, loc, ['segment']);
    return { kind: 'segment', segment_id: rowId(c.segment, [...loc, 'segment'], 'segment') };
  }
  if ('message' in c) {
    checkKeys(c, loc, ['message', 'within', 'campaign_id', 'automation_id']);
    const s = c.message;
    if (typeof s !== 'string' || !(MESSAGE_STATUSES as readonly string[]).includes(s)) throw new FilterError([...loc, 'message'], `message status must be one of ${MESSAGE_STATUSES.join(', ')}`);
    const within = durationMs(c.within);
    if (within === undefined) throw new FilterError([...loc, 'within'], BAD_DURATION);
    const out: Condition = { kind: 'message', status: s as typeof MESSAGE_STATUSES[number], within };
    if (c.campaign_id !== undefined) out.campaign_id = rowId(c.campaign_id, [...loc, 'campaign_id'], 'campaign_id');
    if (c.automation_id !== undefined) out.automation_id = rowId(c.automation_id, [...loc, 'automation_id'], 'automation_id');
    return out;
  }
  if ('replied_within' in c) {
    checkKeys(c, loc, ['replied_within']);
    const within = durationMs(c.replied_within);
    if (within === undefined) throw new FilterError([...loc, 'replied_within'], BAD_DURATION);
    return { kind: 'replied', within };
  }
  throw new FilterError(loc, 'not a filter: an object with "all", "any", "not", "attribute", "field", "tag", "segment", "message" or "replied_within"');
}

/**
 * Reads a filter given as JSON (see the module comment); the checked tree, or FilterError (422) with
 * `loc` relative to the filter. `limitCost: false` skips the work limits (MAX_FILTER_COST,
 * MAX_LIST_TOTAL): for filters stored before those limits existed, which are still evaluated.
 */
export function parseFilter(input: unknown, opts: { limitCost?: boolean } = {}): FilterNode {
  const limitCost = opts.limitCost ?? true;
  let conditions = 0;
  let cost = 0;
  let listed = 0;
  const walk = (v: unknown, loc: (string | number)[], depth: number): FilterNode => {
    if (depth > MAX_DEPTH) throw new FilterError(loc, `the filter is nested too deep (at most depth ${MAX_DEPTH})`);
    if (!isObject(v)) throw new FilterError(loc, `a filter must be an object, not ${describe(v)}`);
    for (const g of ['all', 'any'] as const) {
      if (g in v) {
        checkKeys(v, loc, [g]);
        const parts = v[g];
        if (!Array.isArray(parts) || parts.length < 1 || parts.length > MAX_CONDITIONS) throw new FilterError([...loc, g], `"${g}" needs a list of 1 to ${MAX_CONDITIONS} filters`);
        return { [g]: parts.map((p, i) => walk(p, [...loc, g, i], depth + 1)) } as FilterNode;
      }
    }
    if ('not' in v) {
      checkKeys(v, loc, ['not']);
      return { not: walk(v.not, [...loc, 'not'], depth + 1) };
    }
    conditions++;
    if (conditions > MAX_CONDITIONS) throw new FilterError(loc, `more than ${MAX_CONDITIONS} conditions`);
    const c = condition(v, loc);
    if (limitCost && ('values' in c) && (c.op === 'in' || c.op === 'not_in')) {
      listed += c.values.length;
      if (listed > MAX_LIST_TOTAL) throw new FilterError([...loc, 'value'], `more than ${MAX_LIST_TOTAL} values in all the filter's "in" and "not_in" lists together`);
    }
    cost += conditionCost(c);
    if (limitCost && cost > MAX_FILTER_COST) throw new FilterError(loc, `the filter costs too much to evaluate: ${cost} units with this condition, at most ${MAX_FILTER_COST} (${COST_RULE})`);
    return c;
  };
  return walk(input, [], 1);
}

const COST_RULE = `a condition costs ${COST.plain}; a segment ${COST.segment}; an attribute compared with a number ${COST.number}; `
  + `an attribute compared with a time ${COST.time}; last_sent_at, last_delivered_at or last_read_at ${COST.messageTime}; a message condition ${COST.message}`;

/**
 * The work units of one checked condition (docs/segments.md "Limits"): COST.plain for a stored field,
 * a tag, opted_out, replied_within or an attribute compared as text; COST.segment for `segment`;
 * COST.number for an attribute compared with a number (or a list of them); COST.time for an attribute
 * compared with a time; COST.messageTime for the message-derived times (last_sent_at, ...);
 * COST.message for `message`.
 */
export function conditionCost(c: Condition): number {
  switch (c.kind) {
    case 'attribute':
      if (c.values.some((v) => 'time' in v)) return COST.time;
      return c.values.some((v) => 'num' in v) ? COST.number : COST.plain;
    case 'time': return c.field === 'created_at' || c.field === 'last_inbound_at' ? COST.plain : COST.messageTime;
    case 'segment': return COST.segment;
    case 'message': return COST.message;
    default: return COST.plain;
  }
}

/** The work units of a checked filter: the sum of its conditions' costs. */
export function filterCost(node: FilterNode): number {
  return conditionsOf(node).reduce((sum, c) => sum + conditionCost(c), 0);
}

/** The conditions of a checked filter (leaves), in order. */
export function conditionsOf(node: FilterNode): Condition[] {
  if ('all' in node) return node.all.flatMap(conditionsOf);
  if ('any' in node) return node.any.flatMap(conditionsOf);
  if ('not' in node) return conditionsOf(node.not);
  return [node];
}
