/**
 * fast-check arbitraries of dynamic-segment filters (docs/segments.md "The filter language") for
 * test/fuzz/segment-filter.test.ts: filters that follow the grammar (all / any / not and every kind
 * of condition with every op and values of every JSON type), the same with near-grammar mutations
 * (a key dropped, renamed or added, a value of the wrong kind, a node replaced), and the edges of the
 * language's limits, built from the limits themselves (src/domain/segment-filter.ts): depth
 * MAX_DEPTH and one more, MAX_CONDITIONS conditions and one more, lists of MAX_LIST values and one
 * more, MAX_LIST_TOTAL values in all and one more, the work budget MAX_FILTER_COST spent exactly and
 * overspent (each kind's units as the language counts them, filterCost), texts of MAX_TEXT characters
 * and one more, durations at and past MAX_DURATION_DAYS, times at the edges of the calendar and of the
 * ISO format, huge, tiny and non-finite numbers.
 *
 * Values that are not plain JSON of JavaScript (`1e999`, integers past 2^53) are `JSON.rawJSON` texts;
 * keys like `__proto__` are own properties (as JSON.parse makes them), so the posted text holds them.
 */
import fc from 'fast-check';
import { scalarValue } from '../helpers/arbitraries.ts';
import {
  filterCost, MAX_CONDITIONS, MAX_DEPTH, MAX_DURATION_DAYS, MAX_FILTER_COST, MAX_LIST, MAX_LIST_TOTAL, MAX_TEXT, MESSAGE_STATUSES, OPS,
  parseFilter, TEXT_FIELDS, TIME_FIELDS,
} from '../../src/domain/segment-filter.ts';

/** Ids the filters refer to: the fuzzed company's and another company's. */
export interface FilterIds {
  ownStatic: number;
  ownDynamic: number;
  ownCampaign: number;
  ownAutomation: number;
  otherStatic: number;
  otherCampaign: number;
  otherAutomation: number;
}

/** One generated filter and what made it (for the failure message and the run's statistics). */
export interface GeneratedFilter { label: string; filter: unknown }

type Json = unknown;
type Obj = Record<string, Json>;

const rawJSON = (text: string): Json => (JSON as unknown as { rawJSON(t: string): unknown }).rawJSON(text);
const isRawJSON = (v: unknown): boolean => (JSON as unknown as { isRawJSON(x: unknown): boolean }).isRawJSON(v);

/** `o` with the own enumerable property `key` (also for `__proto__`, which a literal would not make own). */
export function withKey(o: Obj, key: string, value: Json): Obj {
  const out: Obj = {};
  for (const k of Object.keys(o)) Object.defineProperty(out, k, { value: o[k], enumerable: true, writable: true, configurable: true });
  Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
  return out;
}

function withoutKey(o: Obj, key: string): Obj {
  const out: Obj = {};
  for (const k of Object.keys(o)) if (k !== key) Object.defineProperty(out, k, { value: o[k], enumerable: true, writable: true, configurable: true });
  return out;
}

const isPlainObject = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v) && !isRawJSON(v);

// ------------------------------------------------------------------------------------------------
// Values
// ------------------------------------------------------------------------------------------------

const DAYS = MAX_DURATION_DAYS;

/** Numbers of JavaScript at the edges of float64 and of the integer ranges. */
export const EXTREME_NUMBERS: readonly number[] = [
  1e308, -1e308, 5e-324, -5e-324, Number.MAX_VALUE, -Number.MAX_VALUE, Number.MAX_SAFE_INTEGER + 2, -(Number.MAX_SAFE_INTEGER + 2),
  Number.MAX_SAFE_INTEGER, -0, 0, 1, 7, 10, 2.5, -3, 0.1, 1e-7, 1e21, 2147483647, 2147483648, -2147483649, 123456789.123456789,
];
/** Number literals JavaScript cannot hold (read by the server as Infinity, 0 or a rounded value). */
const RAW_NUMBERS: readonly string[] = [
  '1e999', '-1e999', '1e-999', '9007199254740993', '123456789012345678901234567890', '-0.0', '1E+2', '0.0000000000000000000000001', `1${'0'.repeat(400)}`,
];
/** Numbers written as text: exponents past float64, spellings a number parser may or may not take. */
export const NUMBER_TEXTS: readonly string[] = [
  '1e999', '-1e999', '1e-999', '1e1000', '1e+308', '5e-324', '9007199254740993', '7', '10.0', '-0', '0x10', 'Infinity', 'NaN', ' 7', '7 ',
  '1_000', '+7', '.5', '5.', '١٢', `9${'9'.repeat(400)}`,
];
/** Durations at, inside and past the limit, and malformed ones. */
export const DURATIONS: readonly string[] = [
  `${DAYS}d`, `${DAYS + 1}d`, `${DAYS * 24}h`, `${DAYS * 24 + 1}h`, `${DAYS * 1440}m`, `${DAYS * 1440 + 1}m`, '999999999d', '99999999d', '0d', '-1d',
  '1.5d', '1D', '1m', '1h', '30d', '2d', '', ' 1d', '1d ', '01d', '1w', '١d', '1e3d', '+1d', '1 d', '1d\u0000', 'd', '30',
];
/** Relative times (a `-` and a duration), at and past the limit, and malformed ones. */
export const RELATIVE_TIMES: readonly string[] = [
  `-${DAYS}d`, `-${DAYS + 1}d`, `-${DAYS * 1440}m`, `-${DAYS * 1440 + 1}m`, '-999999d', '-99999999d', '-999999999d', '-0d', '-7d', '-1m', '-2h',
  '--1d', '+7d', '-1.5d', '-1D', '- 1d',
];
/** Absolute times at the edges of the calendar, of the offsets and of the ISO format. */
export const ABSOLUTE_TIMES: readonly string[] = [
  '0001-01-01', '0000-01-01', '9999-12-31', '9999-12-31T23:59:59Z', '9999-12-31T23:59:59-15:00', '9999-12-31T23:59:59+15:00',
  '0001-01-01T00:00:00+15:00', '0001-01-01T00:00:00-15:00', '0001-01-01T00:00Z', '2026-02-29', '2024-02-29', '2024-02-29T24:00:00Z',
  '+275760-09-13', '275760-09-13T00:00:00Z', '-271821-04-20', '2026-01-05T10:00:00.123456Z', '2026-01-05T10:00:00.1234567Z',
  '2026-01-05T10:00Z', '2026-01-05T10:00:00+15:59', '2026-01-05T10:00:00+16:00', '2026-01-05T10:00:00-00:00', '2026-13-01',
  '2026-00-10', '2026-01-32', '2026-01-05T10:00:60Z', '2026-01-05T10:60:00Z', '2026-01-05 10:00:00Z', '2026-01-05t10:00:00z',
  '2026-01-05T10:00:00', '1970-01-01T00:00:00Z', '1969-12-31T23:59:59.999999Z', '2026-01-01', '2030-06-15T12:00:00+02:00',
];
/** Texts: the limits in code points (astral characters count one), U+0000, lone surrogates, SQL-ish text. */
export const TEXTS: readonly string[] = [
  'Berlin', 'berlin', 'Ber', 'Paris', 'Ada', 'Lovelace', '+49151', '+4915112340001', 'DE', 'de', 'FR', '', ' ', 'a'.repeat(MAX_TEXT),
  'a'.repeat(MAX_TEXT + 1), '😀'.repeat(MAX_TEXT), '😀'.repeat(MAX_TEXT + 1), `${'é'.repeat(MAX_TEXT - 1)}😀`, '\u0000', 'a\u0000', '\ud800',
  'x\udfff', '\udbff\udc00', 'x\ud83d', "'; DROP TABLE contacts; --", '%', '_', '\\', '$1', '?', '7', '10', '2026-01-01', '\u202e',
  'ß', 'İ', 'e\u0301', '\ufeff', '\uffff',
];
/** Attribute names and tags: the limit (64) in code points and one more, empty, U+0000, surrogates, prototype names. */
export const NAMES: readonly string[] = [
  'score', 'joined', 'city', 'flag', 'big', 'tiny', 'neg', 'nobody', 'vip', 'berlin', 'trial', 'ä-tag', 'a'.repeat(64), 'a'.repeat(65),
  '😀'.repeat(64), '😀'.repeat(65), '', '\u0000', 'a\u0000', '\ud800', "'; DROP TABLE contacts; --", 'variables', '__proto__',
  'constructor', 'toString', '->>', ' ',
];
const BAD_OPS: readonly Json[] = ['equals', 'EQ', 'Eq', ' eq', 'eq ', '', 'gt=', '__proto__', 'in_list', 'eq\u0000', null, 1, true, ['eq'], { op: 'eq' }];
const BAD_FIELDS: readonly Json[] = ['Phone', 'email', 'variables', 'contact_id', 'first_name ', '', null, 1, ['phone'], { field: 'phone' }, '__proto__'];
const BAD_STATUSES: readonly Json[] = ['Sent', 'queued', 'accepted', '', ' read', null, 1, ['read']];
/** Values of the wrong kind almost anywhere. */
export const WRONG_KINDS: readonly Json[] = [null, true, false, [], {}, [1], ['eq'], { a: 1 }, 0, -1, 1.5, '', [[]], [null], { value: 1 }];

const anyChar = fc.oneof(
  { weight: 4, arbitrary: fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 1 }) },
  { weight: 2, arbitrary: scalarValue },
  { weight: 1, arbitrary: fc.constantFrom('\u0000', '\ud800', '\udfff', '%', '_', "'", '"', '\\', '😀', '\u202e') },
);
const randomText = fc.string({ unit: anyChar, minLength: 0, maxLength: 12 });

const pick = <T>(xs: readonly T[]) => fc.constantFrom(...xs);
const numberArb: fc.Arbitrary<Json> = fc.oneof(
  { weight: 4, arbitrary: pick(EXTREME_NUMBERS) },
  { weight: 1, arbitrary: pick(RAW_NUMBERS).map(rawJSON) },
  { weight: 2, arbitrary: fc.double({ noNaN: true, noDefaultInfinity: true }) },
  { weight: 2, arbitrary: fc.integer({ min: -20, max: 20 }) },
);
const textArb: fc.Arbitrary<Json> = fc.oneof({ weight: 5, arbitrary: pick(TEXTS) }, { weight: 2, arbitrary: randomText }, { weight: 1, arbitrary: pick(NUMBER_TEXTS) });
const timeArb: fc.Arbitrary<Json> = fc.oneof(pick(ABSOLUTE_TIMES), pick(RELATIVE_TIMES), { weight: 1, arbitrary: pick(DURATIONS) });
const nameArb: fc.Arbitrary<Json> = fc.oneof({ weight: 8, arbitrary: pick(NAMES) }, { weight: 2, arbitrary: randomText }, { weight: 1, arbitrary: pick(WRONG_KINDS) });
/** Any JSON value the language might meet. */
export const anyValue: fc.Arbitrary<Json> = fc.oneof(
  numberArb, textArb, timeArb, fc.boolean(), pick(WRONG_KINDS), pick(DURATIONS),
  fc.array(fc.oneof(numberArb, textArb, fc.boolean()), { maxLength: 3 }),
);

/** A list of `n` values: numbers, texts, times or a mix; sometimes one of the wrong kind at a random place. */
function listOf(n: number): fc.Arbitrary<Json[]> {
  return fc.tuple(fc.constantFrom('num', 'text', 'time', 'mix', 'bool'), fc.option(fc.tuple(fc.nat(), pick(WRONG_KINDS)), { freq: 6 }))
    .map(([kind, bad]) => {
      const list: Json[] = Array.from({ length: n }, (_, i) => (kind === 'num' ? 1_000_000 + i
        : kind === 'text' ? `v${i}`
          : kind === 'time' ? `-${1 + i}d`
            : kind === 'bool' ? i % 2 === 0
              : [i, `v${i}`, i % 3 === 0][i % 3]));
      if (bad && n > 0) list[bad[0] % n] = bad[1];
      return list;
    });
}

/** Lists for `in` / `not_in`: short ones mostly, empty, MAX_LIST and MAX_LIST + 1 long. */
const listArb: fc.Arbitrary<Json> = fc.oneof(
  { weight: 6, arbitrary: fc.array(fc.oneof(numberArb, textArb, timeArb, fc.boolean()), { minLength: 1, maxLength: 4 }) },
  { weight: 1, arbitrary: fc.constantFrom(0, MAX_LIST, MAX_LIST + 1).chain(listOf) },
  { weight: 1, arbitrary: anyValue },
);

// ------------------------------------------------------------------------------------------------
// Conditions
// ------------------------------------------------------------------------------------------------

const ORDERED = ['gt', 'gte', 'lt', 'lte'];
const opArb: fc.Arbitrary<Json> = fc.oneof({ weight: 12, arbitrary: pick(OPS) }, { weight: 1, arbitrary: pick(BAD_OPS) });

/** Code points of a text (a lone surrogate counts one). */
const cpLength = (t: string) => [...t].length;
/** Texts and names of an allowed length (U+0000 and lone surrogates included: the operator API makes them U+FFFD). */
const FITTING_TEXTS = TEXTS.filter((t) => cpLength(t) >= 1 && cpLength(t) <= MAX_TEXT);
const FITTING_NAMES = NAMES.filter((t) => cpLength(t) >= 1 && cpLength(t) <= 64);
const fittingText: fc.Arbitrary<Json> = fc.oneof({ weight: 5, arbitrary: pick(FITTING_TEXTS) }, { weight: 1, arbitrary: pick(NUMBER_TEXTS) });
const fittingName: fc.Arbitrary<Json> = pick(FITTING_NAMES);
/** Times: absolute and relative ones, at and past the edges. */
const timeOnly: fc.Arbitrary<Json> = fc.oneof(pick(ABSOLUTE_TIMES), pick(RELATIVE_TIMES));

/**
 * The value of a comparison with `op` on a `kind` of operand: in `strict` mode of the kind the op
 * takes (extreme, possibly out of range, but of the right JSON type); else mostly so, sometimes anything.
 */
function valueFor(kind: 'attribute' | 'text' | 'time' | 'opted_out', op: Json, strict: boolean): fc.Arbitrary<Json> {
  const loose = (a: fc.Arbitrary<Json>) => (strict ? a : fc.oneof({ weight: 6, arbitrary: a }, { weight: 1, arbitrary: anyValue }));
  const ordered = typeof op === 'string' && ORDERED.includes(op);
  const one: fc.Arbitrary<Json> = kind === 'opted_out' ? fc.boolean()
    : kind === 'time' ? timeOnly
      : kind === 'text' ? (strict ? fittingText : textArb)
        : op === 'contains' || op === 'starts_with' ? (strict ? fittingText : textArb)
          : ordered ? fc.oneof(numberArb, timeOnly, strict ? fittingText : textArb)
            : fc.oneof(numberArb, strict ? fittingText : textArb, fc.boolean());
  if (op === 'in' || op === 'not_in') {
    return strict ? fc.oneof({ weight: 8, arbitrary: fc.array(one, { minLength: 1, maxLength: 4 }) }, { weight: 1, arbitrary: fc.constantFrom(MAX_LIST, MAX_LIST + 1).chain(listOf) })
      : loose(listArb);
  }
  return loose(one);
}

/** `base` with `op` and (unless the op takes none) a value; when not `strict`, a tenth lose the op or get the value wrong. */
function comparison(base: Obj, kind: 'attribute' | 'text' | 'time' | 'opted_out', ops: fc.Arbitrary<Json>, strict: boolean): fc.Arbitrary<Obj> {
  return fc.tuple(ops, fc.nat(19)).chain(([op, flip]) => {
    const wantsValue = op !== 'exists' && op !== 'not_exists';
    const withValue = !strict && flip === 0 ? !wantsValue : wantsValue;
    const withOp = !strict && flip === 1 ? base : { ...base, op };
    return withValue ? valueFor(kind, op, strict).map((value) => ({ ...withOp, value })) : fc.constant(withOp);
  });
}

const TIME_OPS = ['gt', 'gte', 'lt', 'lte', 'exists', 'not_exists'];

/** Ids: the company's own, another company's, and ids out of range or of the wrong type. */
function idArb(own: number[], other: number[]): fc.Arbitrary<Json> {
  return fc.oneof(
    { weight: 5, arbitrary: pick(own) },
    { weight: 2, arbitrary: pick(other) },
    { weight: 2, arbitrary: fc.constantFrom<Json>(0, -1, 2147483647, 2147483648, 1.5, -0, 1e308, Number.MAX_SAFE_INTEGER + 2, rawJSON('1e999'), rawJSON('9007199254740993')) },
    { weight: 1, arbitrary: fc.constantFrom<Json>(...own.map(String), null, true, [own[0]], { id: own[0] }, '') },
  );
}

/**
 * One condition of every kind. `strict`: by the grammar, each op applied to the kinds of operand it
 * takes, values of the JSON type it takes (so that extreme values reach the database); else with the
 * ops applied to every kind of operand, values of any type, ids of other companies and out of range.
 */
export function conditionArb(ids: FilterIds, strict = false): fc.Arbitrary<Obj> {
  const anyOp = strict ? pick(OPS) : opArb;
  const attribute = (strict ? fittingName : nameArb).chain((name) => comparison({ attribute: name }, 'attribute', anyOp, strict));
  const textField = pick(TEXT_FIELDS).chain((field) => comparison({ field }, 'text', anyOp, strict));
  // Time fields: mostly their own ops, but (when not strict) every op too.
  const timeField = pick(TIME_FIELDS).chain((field) => comparison({ field }, 'time', strict ? pick(TIME_OPS) : fc.oneof({ weight: 3, arbitrary: pick(TIME_OPS) }, { weight: 1, arbitrary: opArb }), strict));
  const optedOut = comparison({ field: 'opted_out' }, 'opted_out', strict ? pick(['eq', 'ne']) : fc.oneof({ weight: 3, arbitrary: pick(['eq', 'ne']) }, { weight: 1, arbitrary: opArb }), strict);
  const badField = pick(BAD_FIELDS).chain((field) => comparison({ field }, 'text', opArb, false));
  const tag = (strict ? fittingName : fc.oneof({ weight: 6, arbitrary: nameArb }, { weight: 1, arbitrary: anyValue })).map((t) => ({ tag: t }));
  const segment = (strict ? pick([ids.ownStatic]) : idArb([ids.ownStatic, ids.ownStatic, ids.ownDynamic], [ids.otherStatic])).map((id) => ({ segment: id }));
  const message = fc.record({
    message: strict ? pick(MESSAGE_STATUSES) : fc.oneof({ weight: 6, arbitrary: pick(MESSAGE_STATUSES) }, { weight: 1, arbitrary: pick(BAD_STATUSES) }),
    within: strict ? pick(DURATIONS) : fc.oneof({ weight: 6, arbitrary: pick(DURATIONS) }, { weight: 1, arbitrary: anyValue }),
    campaign_id: strict ? pick([ids.ownCampaign]) : idArb([ids.ownCampaign], [ids.otherCampaign, ids.otherAutomation]),
    automation_id: strict ? pick([ids.ownAutomation]) : idArb([ids.ownAutomation], [ids.otherAutomation, ids.otherCampaign]),
  }, { requiredKeys: ['message', 'within'] });
  const replied = (strict ? pick(DURATIONS) : fc.oneof({ weight: 6, arbitrary: pick(DURATIONS) }, { weight: 1, arbitrary: anyValue })).map((d) => ({ replied_within: d }));
  const kinds: fc.WeightedArbitrary<Obj>[] = [
    { weight: 6, arbitrary: attribute }, { weight: 3, arbitrary: textField }, { weight: 3, arbitrary: timeField },
    { weight: 1, arbitrary: optedOut }, { weight: 2, arbitrary: tag }, { weight: 2, arbitrary: segment },
    { weight: 2, arbitrary: message }, { weight: 1, arbitrary: replied },
  ];
  if (!strict) kinds.push({ weight: 1, arbitrary: badField });
  return fc.oneof(...kinds);
}

/** A filter by the grammar: conditions under all / any / not, usually within the depth limit, sometimes past it. */
export function treeArb(ids: FilterIds, strict = false): fc.Arbitrary<Json> {
  const leaf = conditionArb(ids, strict);
  const { node } = fc.letrec<{ node: Json }>((tie) => ({
    node: fc.oneof({ depthSize: 'small', withCrossShrink: true, maxDepth: strict ? MAX_DEPTH - 1 : MAX_DEPTH + 1 },
      { weight: 3, arbitrary: leaf },
      { weight: 1, arbitrary: fc.array(tie('node'), { minLength: 1, maxLength: strict ? 3 : 4 }).map((all) => ({ all })) },
      { weight: 1, arbitrary: fc.array(tie('node'), { minLength: 1, maxLength: strict ? 3 : 4 }).map((any) => ({ any })) },
      { weight: 1, arbitrary: tie('node').map((n) => ({ not: n })) }),
  }));
  return node;
}

// ------------------------------------------------------------------------------------------------
// The limits
// ------------------------------------------------------------------------------------------------

/** A cheap condition (a tag nobody has): COST.plain. */
const cheap = (i: number): Obj => ({ tag: `t${i}` });

/** `leaf` under `depth - 1` groups (the leaf is then at depth `depth`). */
function nest(depth: number, leaf: Obj, groups: ('all' | 'any' | 'not')[]): Json {
  let node: Json = leaf;
  for (let i = 1; i < depth; i++) {
    const g = groups[i % groups.length];
    node = g === 'not' ? { not: node } : { [g]: [node] };
  }
  return node;
}

/** The work units of one condition, as the language counts them (whatever the weights are now). */
const unitsOf = (c: Obj) => filterCost(parseFilter(c, { limitCost: false }));

/** Costly conditions of each kind (src/domain/segment-filter.ts COST), with their work units. */
function costly(ids: FilterIds): [string, number, (i: number) => Obj][] {
  const kinds: [string, (i: number) => Obj][] = [
    ['number', (i) => ({ attribute: 'score', op: 'gt', value: 1e308 - i })],
    ['number list', (i) => ({ attribute: 'score', op: 'not_in', value: Array.from({ length: MAX_LIST }, (_, j) => 5e-324 * (i * MAX_LIST + j + 1)) })],
    ['attribute time', (i) => ({ attribute: 'joined', op: 'lt', value: `-${i + 1}d` })],
    ['message time', (i) => ({ field: i % 2 ? 'last_read_at' : 'last_sent_at', op: 'gte', value: `-${DAYS}d` })],
    ['message', (i) => ({ message: MESSAGE_STATUSES[i % 4], within: `${DAYS}d`, campaign_id: ids.ownCampaign })],
    ['segment', () => ({ segment: ids.ownStatic })],
  ];
  return kinds.map(([kind, make]) => [kind, unitsOf(make(0)), make]);
}

/** Filters at the limits and one past them (each labelled with the limit it probes). */
export function edgeArb(ids: FilterIds): fc.Arbitrary<GeneratedFilter> {
  const groups = fc.array(fc.constantFrom<'all' | 'any' | 'not'>('all', 'any', 'not'), { minLength: 1, maxLength: 3 });
  const depth = fc.tuple(fc.constantFrom(MAX_DEPTH, MAX_DEPTH + 1, MAX_DEPTH + 2, 60), groups, conditionArb(ids, true))
    .map(([d, g, leaf]) => ({ label: `depth ${d}`, filter: nest(d, leaf, g) }));
  const wide = fc.tuple(fc.constantFrom(MAX_CONDITIONS, MAX_CONDITIONS + 1), fc.constantFrom<'all' | 'any'>('all', 'any'), fc.nat(MAX_CONDITIONS))
    .map(([n, g, split]) => {
      const leaves = Array.from({ length: n }, (_, i) => cheap(i));
      // One group of n parts, or the n conditions split over two nested groups.
      const filter = split === 0 || split >= n ? { [g]: leaves } : { [g]: [{ any: leaves.slice(0, split) }, { not: { all: leaves.slice(split) } }] };
      return { label: `${n} conditions`, filter };
    });
  const lists = fc.tuple(fc.constantFrom(MAX_LIST_TOTAL, MAX_LIST_TOTAL + 1), fc.constantFrom('in', 'not_in'), fc.constantFrom('attribute', 'first_name'))
    .map(([total, op, on]) => {
      const parts: Obj[] = [];
      for (let start = 0; start < total; start += MAX_LIST) {
        const value = Array.from({ length: Math.min(MAX_LIST, total - start) }, (_, i) => `v${start + i}`);
        parts.push(on === 'attribute' ? { attribute: 'city', op, value } : { field: 'first_name', op, value });
      }
      return { label: `${total} list values in all`, filter: { any: parts } };
    });
  const cost = fc.tuple(fc.constantFrom(...costly(ids)), fc.boolean())
    .map(([[kind, weight, make], over]) => {
      const n = Math.min(MAX_CONDITIONS, Math.floor(MAX_FILTER_COST / weight));
      const rest = Math.min(MAX_CONDITIONS - n, Math.floor((MAX_FILTER_COST - n * weight) / unitsOf(cheap(0))));
      const parts = [...Array.from({ length: n }, (_, i) => make(i)), ...Array.from({ length: rest }, (_, i) => cheap(i))];
      // One more unit (or condition) than the budget allows.
      if (over) parts.push(parts.length < MAX_CONDITIONS ? cheap(rest) : make(n));
      return { label: `cost of ${kind}${over ? ' + 1' : ''}`, filter: { any: parts } };
    });
  const texts = fc.tuple(fc.constantFrom('a', '😀', '\u0000'), fc.constantFrom(MAX_TEXT, MAX_TEXT + 1), fc.constantFrom('attribute', 'field', 'list'))
    .map(([ch, n, on]) => {
      const t = ch === '\u0000' ? `${'a'.repeat(n - 1)}\u0000` : ch.repeat(n);
      const filter = on === 'attribute' ? { attribute: 'city', op: 'starts_with', value: t }
        : on === 'field' ? { field: 'last_name', op: 'eq', value: t } : { attribute: 'city', op: 'not_in', value: ['Berlin', t] };
      return { label: `text of ${n} ${ch === 'a' ? 'ASCII' : ch === '😀' ? 'astral' : 'with U+0000'}`, filter };
    });
  return fc.oneof(depth, wide, lists, cost, texts);
}

// ------------------------------------------------------------------------------------------------
// Mutations
// ------------------------------------------------------------------------------------------------

type Path = (string | number)[];

/** The places of `v` (objects and arrays, and the values of their keys), in document order. */
function places(v: Json, path: Path = [], out: Path[] = []): Path[] {
  out.push(path);
  if (Array.isArray(v)) v.forEach((x, i) => places(x, [...path, i], out));
  else if (isPlainObject(v)) for (const k of Object.keys(v)) places(v[k], [...path, k], out);
  return out;
}

/** `v` with the value at `path` replaced by `f(old)` (copies along the path; the rest is shared). */
function updateAt(v: Json, path: Path, f: (old: Json) => Json): Json {
  if (path.length === 0) return f(v);
  const [k, ...rest] = path;
  if (Array.isArray(v)) return v.map((x, i) => (i === k ? updateAt(x, rest, f) : x));
  const o = v as Obj;
  return withKey(withoutKey(o, k as string), k as string, updateAt(o[k as string], rest, f));
}

const UNKNOWN_KEYS = ['extra', 'Value', 'values', 'OP', '__proto__', 'constructor', 'prototype', '', '\u0000', 'toString', 'hasOwnProperty'];
const DISCRIMINATORS = ['all', 'any', 'not', 'attribute', 'field', 'tag', 'segment', 'message', 'replied_within', 'within', 'op', 'value'];

/** One near-grammar mutation: what it does to the value at a place. */
const mutationArb: fc.Arbitrary<[string, (old: Json) => Json]> = fc.oneof(
  fc.tuple(pick(UNKNOWN_KEYS), anyValue).map(([k, x]): [string, (o: Json) => Json] => [`add key ${JSON.stringify(k)}`, (o) => (isPlainObject(o) ? withKey(o, k, x) : o)]),
  fc.nat().map((i): [string, (o: Json) => Json] => ['drop a key', (o) => {
    if (!isPlainObject(o)) return o;
    const keys = Object.keys(o);
    return keys.length ? withoutKey(o, keys[i % keys.length]) : o;
  }]),
  fc.tuple(fc.nat(), pick(DISCRIMINATORS)).map(([i, to]): [string, (o: Json) => Json] => [`rename a key to ${to}`, (o) => {
    if (!isPlainObject(o)) return o;
    const keys = Object.keys(o);
    if (!keys.length) return o;
    const k = keys[i % keys.length];
    return withKey(withoutKey(o, k), to, o[k]);
  }]),
  fc.tuple(fc.nat(), fc.constantFrom<(k: string) => string>((k) => k.toUpperCase(), (k) => `${k} `, (k) => k.slice(0, -1))).map(([i, f]): [string, (o: Json) => Json] => ['misspell a key', (o) => {
    if (!isPlainObject(o)) return o;
    const keys = Object.keys(o);
    if (!keys.length) return o;
    const k = keys[i % keys.length];
    return withKey(withoutKey(o, k), f(k), o[k]);
  }]),
  anyValue.map((x): [string, (o: Json) => Json] => ['replace a value', () => x]),
  fc.constant<[string, (o: Json) => Json]>(['wrap in a list', (o) => [o]]),
  fc.constant<[string, (o: Json) => Json]>(['empty the list or object', (o) => (Array.isArray(o) ? [] : isPlainObject(o) ? {} : o)]),
  fc.constantFrom<[string, Json]>(['all: []', { all: [] }], ['any: {}', { any: {} }], ['not: []', { not: [] }], ['not: null', { not: null }],
    ['all and any', { all: [{ tag: 'vip' }], any: [{ tag: 'vip' }] }], ['tag and segment', { tag: 'vip', segment: 1 }],
    ['attribute and field', { attribute: 'city', field: 'phone', op: 'eq', value: 'x' }], ['{}', {}], ['proto tag', JSON.parse('{"__proto__":{"tag":"vip"}}')],
    ['proto in all', JSON.parse('{"all":[{"tag":"vip"}],"__proto__":{"tag":"x"}}')], ['constructor', { constructor: { prototype: { tag: 'vip' } } }],
    ['not of not', { not: { not: { not: { tag: 'vip' } } } }], ['op without operand', { op: 'eq', value: 1 }])
    .map(([label, x]): [string, (o: Json) => Json] => [`replace by ${label}`, () => x]),
);

/** A grammar filter with one to three near-grammar mutations at random places. */
export function mutatedArb(ids: FilterIds): fc.Arbitrary<GeneratedFilter> {
  return fc.tuple(fc.oneof(treeArb(ids, true), treeArb(ids)), fc.array(fc.tuple(fc.nat(), mutationArb), { minLength: 1, maxLength: 3 }))
    .map(([tree, ms]) => {
      let filter = tree;
      const labels: string[] = [];
      for (const [at, [label, f]] of ms) {
        const all = places(filter);
        const path = all[at % all.length];
        filter = updateAt(filter, path, f);
        labels.push(`${label} at ${JSON.stringify(path)}`);
      }
      return { label: `mutated: ${labels.join('; ')}`, filter };
    });
}

/** Top levels that are no filter object. */
const notAnObject = fc.constantFrom<Json>(null, [], [{ tag: 'vip' }], 'x', '', 0, 1e308, true, {}, JSON.parse('{"__proto__":{"tag":"vip"}}'))
  .map((filter) => ({ label: 'not a filter object', filter }));

/** Every kind of generated filter: by the grammar, mutated, at the limits, no object at all. */
export function filterArb(ids: FilterIds): fc.Arbitrary<GeneratedFilter> {
  return fc.oneof(
    { weight: 8, arbitrary: treeArb(ids, true).map((filter) => ({ label: 'grammar', filter })) },
    { weight: 5, arbitrary: treeArb(ids).map((filter) => ({ label: 'grammar, any kinds', filter })) },
    { weight: 5, arbitrary: mutatedArb(ids) },
    { weight: 3, arbitrary: edgeArb(ids) },
    { weight: 1, arbitrary: notAnObject },
  );
}
