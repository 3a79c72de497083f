/**
 * The fast path for ordinary bodies (src/http/validation/fast.ts) against the exact path
 * (json.ts decoding + validate.ts), docs/decisions.md#1-request-handling-order, steps 2 and 5, #2-request-models:
 *
 * - differential property test over generated bodies of the four request models: valid ones and
 *   near-valid mutations (wrong types, coercible strings, `7.0`, booleans, huge ints, `-0`, duplicate
 *   keys, `\u` escapes and lone surrogates, NaN/Infinity, long digit runs, deep nesting, lists over
 *   1000, missing and extra fields, UTF-16 and BOMs). For every body: parseBody gives what the exact
 *   parse gives (kind, errors, PyValue), and validateRequest gives the exact path's result, deep-equal
 *   (key order, prototypes, int/bigint/float); where the fast path answered, that is its value;
 * - unit cases showing the fast path is taken for ordinary bodies and declined where it must be.
 */

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { decodeJsonBytes } from '../../src/http/validation/decode.ts';
import { DECLINE } from '../../src/http/validation/fast.ts';
import {
  ConnectorSend, CreateSegment, JsonDecodeError, ManageSegmentContacts, TriggerAutomation, parseBody, parsePythonJson,
  validateRequest, type BodyParse, type Model, type PathParam,
} from '../../src/http/validation/index.ts';
import { jsonInvalidError } from '../../src/http/validation/errors.ts';
import { NASTY_CHARS } from '../fuzz/generators.ts';

const SEED = 160_016;

/** The exact path's step 2 for a JSON Content-Type (what parseBody did before the fast path). */
function exactParse(raw: Uint8Array): BodyParse {
  if (raw.length === 0) return { kind: 'missing' };
  const text = decodeJsonBytes(raw);
  if (text === null) return { kind: 'unparseable' };
  try {
    const value = parsePythonJson(text);
    return value === null ? { kind: 'missing' } : { kind: 'value', value };
  } catch (e) {
    return e instanceof JsonDecodeError ? { kind: 'invalid', errors: [jsonInvalidError(e.msg, e.pos)] } : { kind: 'unparseable' };
  }
}

/** Whether parseBody's result carries the JSON.parse reading and the model's fast validator accepts it. */
function fastAnswers(model: Model<unknown>, body: BodyParse): boolean {
  return body.kind === 'value' && body.json !== undefined && model.fast(body.json) !== DECLINE;
}

/** UTF-8 that keeps lone surrogates as their 3-byte forms (Python's surrogatepass), as a client could send. */
function utf8SurrogatePass(text: string): Uint8Array {
  const out: number[] = [];
  for (let i = 0; i < text.length; i++) {
    const cp = text.codePointAt(i) as number;
    if (cp > 0xffff) i++;
    if (cp < 0x80) out.push(cp);
    else if (cp < 0x800) out.push(0xc0 | (cp >> 6), 0x80 | (cp & 0x3f));
    else if (cp < 0x10000) out.push(0xe0 | (cp >> 12), 0x80 | ((cp >> 6) & 0x3f), 0x80 | (cp & 0x3f));
    else out.push(0xf0 | (cp >> 18), 0x80 | ((cp >> 12) & 0x3f), 0x80 | ((cp >> 6) & 0x3f), 0x80 | (cp & 0x3f));
  }
  return Uint8Array.from(out);
}

// ---- a JSON syntax tree that keeps the spelling choices JSON.parse and Python could read differently

type J =
  | { t: 'lit'; text: string }
  | { t: 'str'; s: string; spell: 'json' | 'escapeAll' | 'raw' }
  | { t: 'arr'; items: J[] }
  | { t: 'obj'; entries: [string, J][] };

const lit = (text: string): J => ({ t: 'lit', text });
const str = (s: string, spell: 'json' | 'escapeAll' | 'raw' = 'json'): J => ({ t: 'str', s, spell });

function emitString(s: string, spell: 'json' | 'escapeAll' | 'raw'): string {
  if (spell === 'json') return JSON.stringify(s);
  if (spell === 'escapeAll') {
    let out = '"';
    for (let i = 0; i < s.length; i++) out += '\\u' + s.charCodeAt(i).toString(16).padStart(4, '0');
    return out + '"';
  }
  // raw: only quote, backslash and controls escaped; lone surrogates stay raw (encoded with surrogatepass)
  let out = '"';
  for (const ch of s) {
    const c = ch.charCodeAt(0);
    out += ch === '"' || ch === '\\' || c < 0x20 ? JSON.stringify(ch).slice(1, -1) : ch;
  }
  return out + '"';
}

function emit(j: J, ws: string): string {
  switch (j.t) {
    case 'lit':
      return j.text;
    case 'str':
      return emitString(j.s, j.spell);
    case 'arr':
      return `[${ws}${j.items.map((x) => emit(x, ws)).join(`,${ws}`)}]`;
    case 'obj':
      return `{${j.entries.map(([k, v]) => `${JSON.stringify(k)}${ws}:${emit(v, ws)}`).join(',')}${ws}}`;
  }
}

// ---- arbitraries

const SPECIAL_NUMBERS = [
  '7', '7.0', '7e0', '70E-1', '0', '-0', '-0.0', '0.0', '1', '1.0', '1.5', '-3', '1e2', '1E+2', '0.1', '1e-400', '1e400', '-1e400',
  '9007199254740991', '9007199254740992', '9007199254740993', '-9007199254740993', '12345678901234567890', '9223372036854775808',
  '9007199254740991.4', '1' + '0'.repeat(400), 'NaN', 'Infinity', '-Infinity',
];

const numberText: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...SPECIAL_NUMBERS) },
  { weight: 2, arbitrary: fc.integer().map(String) },
  { weight: 1, arbitrary: fc.bigInt({ min: -(2n ** 70n), max: 2n ** 70n }).map(String) },
  { weight: 1, arbitrary: fc.double().map((d) => (Number.isNaN(d) ? 'NaN' : Number.isFinite(d) ? String(d) : d > 0 ? 'Infinity' : '-Infinity')) },
);

const LONE = ['\ud800', '\udbff', '\udc00', '\udfff'];
const charArb: fc.Arbitrary<string> = fc.oneof(
  { weight: 8, arbitrary: fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 1 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'grapheme', minLength: 1, maxLength: 1 }) },
  { weight: 2, arbitrary: fc.constantFrom(...NASTY_CHARS) },
  { weight: 1, arbitrary: fc.constantFrom(...LONE) },
);
const text = (maxLength: number): fc.Arbitrary<string> => fc.array(charArb, { maxLength }).map((cs) => cs.join(''));
const spelling = fc.constantFrom<'json' | 'escapeAll' | 'raw'>('json', 'json', 'json', 'escapeAll', 'raw');
const strNode = (s: fc.Arbitrary<string>): fc.Arbitrary<J> => fc.tuple(s, spelling).map(([v, sp]) => str(v, sp));

/** A string of about `n` code points (astral characters count one, two UTF-16 units). */
const nearLength = (n: number): fc.Arbitrary<string> =>
  fc.tuple(fc.integer({ min: n - 2, max: n + 2 }), fc.constantFrom('a', 'é', '\u{1F600}')).map(([k, ch]) => ch.repeat(Math.max(0, k)));

const phone = fc.oneof(
  { weight: 6, arbitrary: fc.stringMatching(/^\+?[0-9]{5,15}$/) },
  { weight: 2, arbitrary: text(20) },
  { weight: 1, arbitrary: nearLength(64) },
);
const name = fc.oneof({ weight: 6, arbitrary: text(12) }, { weight: 1, arbitrary: nearLength(255) });
const url = fc.oneof(
  { weight: 6, arbitrary: fc.tuple(fc.constantFrom('https://', 'http://', 'ftp://', 'https:// '), fc.stringMatching(/^[a-z0-9./?=&-]{1,30}$/)).map(([a, b]) => a + b) },
  { weight: 1, arbitrary: text(10).map((s) => `https://x/${s}`) },
  { weight: 1, arbitrary: nearLength(2048).map((s) => `https://${s}`) },
);

/** Any JSON value, with the number and string spellings above (nesting bounded by `depth`). */
const anyJson: fc.Arbitrary<J> = fc.letrec<{ v: J }>((tie) => ({
  v: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    numberText.map(lit),
    fc.constantFrom('null', 'true', 'false').map(lit),
    strNode(text(8)),
    fc.array(tie('v'), { maxLength: 3 }).map((items): J => ({ t: 'arr', items })),
    fc.array(fc.tuple(fc.constantFrom('a', 'b', '0', '1', '10', '__proto__', 'order_id', 'é', ''), tie('v')), { maxLength: 4 })
      .map((entries): J => ({ t: 'obj', entries })),
  ),
})).v;

/** JSON values an ordinary client sends: plain numbers, strings, no NaN. */
const plainJson: fc.Arbitrary<J> = fc.letrec<{ v: J }>((tie) => ({
  v: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.oneof(fc.integer().map(String), fc.double({ noNaN: true, noDefaultInfinity: true }).map((d) => String(d))).map(lit),
    fc.constantFrom('null', 'true', 'false').map(lit),
    strNode(fc.string({ maxLength: 8 })),
    fc.array(tie('v'), { maxLength: 3 }).map((items): J => ({ t: 'arr', items })),
    fc.array(fc.tuple(fc.constantFrom('a', 'b', '0', '10', 'order_id', 'é'), tie('v')), { maxLength: 3 }).map((entries): J => ({ t: 'obj', entries })),
  ),
})).v;

/**
 * The generators of one model's bodies: `mutated` false gives ordinary bodies (right types, values
 * within their limits most of the time, extra keys with plain values); true mixes in anything.
 */
function bodies(mutated: boolean) {
  const w = mutated ? 1 : 0;
  const field = (right: fc.Arbitrary<J>): fc.Arbitrary<J> => (mutated ? fc.oneof({ weight: 6, arbitrary: right }, { weight: 1, arbitrary: anyJson }) : right);
  const optional = (right: fc.Arbitrary<J>): fc.Arbitrary<J | undefined> =>
    fc.oneof({ weight: 3, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: fc.constant(lit('null')) }, { weight: 3, arbitrary: field(right) });
  const intField = field(fc.oneof({ weight: 6, arbitrary: fc.nat().map((n) => lit(String(n))) }, { weight: 2 * w, arbitrary: numberText.map(lit) },
    { weight: w, arbitrary: fc.constantFrom('"7"', '" 7 "', '"1_0"', 'true', 'false').map(lit) }));
  const boolField = field(fc.oneof({ weight: 4, arbitrary: fc.constantFrom('true', 'false').map(lit) }, { weight: w, arbitrary: fc.constantFrom('0', '1', '"yes"', '1.0', '2').map(lit) }));
  const anyValue = mutated ? anyJson : plainJson;
  const obj = (fields: Record<string, fc.Arbitrary<J | undefined>>): fc.Arbitrary<J> => fc.tuple(
    fc.record(fields),
    fc.array(fc.tuple(fc.constantFrom('extra', '__proto__', ...(mutated ? ['phone', 'contacts', 'automation_id', 'name', 'variables', 'mode'] : [])), anyValue), { maxLength: 2 }),
    fc.nat(),
  ).map(([values, extra, where]): J => {
    const entries: [string, J][] = Object.entries(values).filter((e): e is [string, J] => e[1] !== undefined);
    for (const e of extra) entries.splice(where % (entries.length + 1), 0, e);
    return { t: 'obj', entries };
  });
  const phoneText = mutated ? phone : fc.oneof({ weight: 9, arbitrary: fc.stringMatching(/^\+?[0-9]{5,15}$/) }, { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 64 }) });
  const nameText = mutated ? name : fc.string({ unit: 'grapheme', maxLength: 20 });
  const urlText = mutated ? url : fc.stringMatching(/^https?:\/\/[a-z0-9./?=&%-]{1,40}$/);
  const variables = fc.oneof(
    { weight: 4, arbitrary: fc.array(fc.tuple(fc.constantFrom('order_id', 'n', 'x', '0', '7', '__proto__', 'ü'), anyValue), { maxLength: 4 }).map((entries): J => ({ t: 'obj', entries })) },
    { weight: w, arbitrary: anyJson },
  );
  const contacts = (item: fc.Arbitrary<J>): fc.Arbitrary<J> => fc.oneof(
    { weight: 12, arbitrary: fc.array(item, { minLength: 1, maxLength: 6 }).map((items): J => ({ t: 'arr', items })) },
    { weight: w, arbitrary: fc.constant<J>({ t: 'arr', items: [] }) },
    // 1000 (allowed) and 1001 (too long) items, all the same generated one
    { weight: 1, arbitrary: fc.tuple(item, fc.constantFrom(1000, mutated ? 1001 : 1000)).map(([c, n]): J => ({ t: 'arr', items: Array.from({ length: n }, () => c) })) },
    { weight: w, arbitrary: anyJson },
  );
  const automationContact = obj({
    phone: field(strNode(phoneText)),
    first_name: optional(strNode(nameText)),
    last_name: optional(strNode(nameText)),
    variables: optional(variables),
    image_url: optional(strNode(urlText)),
    video_url: optional(strNode(urlText)),
  });
  return {
    TriggerAutomation: obj({
      automation_id: intField, contacts: field(contacts(automationContact)),
      image_url: optional(strNode(urlText)), video_url: optional(strNode(urlText)), url: optional(strNode(urlText)), url2: optional(strNode(urlText)),
    }),
    ConnectorSend: obj({ campaign_id: intField, contacts: field(contacts(obj({ phone: field(strNode(phoneText)) }))) }),
    ManageSegmentContacts: obj({
      contacts: field(fc.array(strNode(phoneText), { maxLength: 5 }).map((items): J => ({ t: 'arr', items }))),
      mode: field(fc.oneof({ weight: 4, arbitrary: fc.constantFrom('"add"', '"delete"').map(lit) }, { weight: w, arbitrary: fc.constantFrom('"Add"', '"remove"').map(lit) })),
      use_hashed_phone: optional(boolField),
    }),
    CreateSegment: obj({ name: field(strNode(mutated ? fc.oneof(name, nearLength(255), fc.constant('')) : fc.string({ unit: 'grapheme', minLength: 1, maxLength: 30 }))) }),
  };
}

const ORDINARY = bodies(false);
const MUTATED = bodies(true);
const MODELS: { name: keyof typeof ORDINARY; model: Model<unknown>; path?: PathParam[] }[] = [
  { name: 'TriggerAutomation', model: TriggerAutomation },
  { name: 'ConnectorSend', model: ConnectorSend },
  { name: 'ManageSegmentContacts', model: ManageSegmentContacts, path: [{ name: 'segment_id', raw: '12' }] },
  { name: 'CreateSegment', model: CreateSegment },
];

/** What is done to the emitted text and bytes (most bodies are left alone). */
const wrapping = (mutated: boolean) => fc.record({
  ws: fc.constantFrom('', '', '', ' ', '\n\t'),
  envelope: mutated ? fc.constantFrom('none', 'none', 'deep', 'longInt', 'longFloat', 'topNull', 'garbage', 'trailingComma', 'nanAtEnd') : fc.constant('none'),
  encoding: fc.constantFrom('utf8', 'utf8', 'utf8', 'utf8', 'utf8bom', 'utf16le'),
});

function bytesOf(j: J, w: { ws: string; envelope: string; encoding: string }): Uint8Array {
  let t = emit(j, w.ws);
  const extra = (v: string): string => (t.startsWith('{') && t.length > 2 ? `{"zz":${v},${t.slice(1)}` : `[${v},${t}]`);
  switch (w.envelope) {
    case 'deep': t = extra('['.repeat(513) + ']'.repeat(513)); break;
    case 'longInt': t = extra('9'.repeat(4301)); break;
    case 'longFloat': t = extra('9'.repeat(4301) + '.5'); break;
    case 'topNull': t = 'null'; break;
    case 'garbage': t = t + ' x'; break;
    case 'trailingComma': t = t.replace(/}$/, ',}'); break;
    case 'nanAtEnd': t = extra('NaN'); break;
  }
  if (w.encoding === 'utf16le') return Buffer.from(t, 'utf16le');
  const b = utf8SurrogatePass(t);
  return w.encoding === 'utf8bom' ? Uint8Array.from([0xef, 0xbb, 0xbf, ...b]) : b;
}

/** The differential property over `runs` bodies; how many of them the fast path answered. */
function differential(m: (typeof MODELS)[number], mutated: boolean, numRuns: number): number {
  let fast = 0;
  const arb = (mutated ? MUTATED : ORDINARY)[m.name];
  fc.assert(
    fc.property(arb, wrapping(mutated), (j, w) => {
      const raw = bytesOf(j, w);
      const body = parseBody(raw, 'application/json');
      const exact = exactParse(raw);
      assert.equal(body.kind, exact.kind);
      if (body.kind === 'value' && exact.kind === 'value') assert.deepStrictEqual(body.value, exact.value);
      if (body.kind === 'invalid' || exact.kind === 'invalid') assert.deepStrictEqual(body, exact);
      if (body.kind === 'unparseable' || body.kind === 'invalid') return;
      if (fastAnswers(m.model, body)) fast++;
      // A fresh parse for the fast side, so its lazy exact value is never read before validation.
      assert.deepStrictEqual(validateRequest(m.model, parseBody(raw, 'application/json'), m.path), validateRequest(m.model, exact, m.path));
    }),
    { seed: SEED, numRuns },
  );
  return fast;
}

describe('fast path against the exact path, generated bodies', () => {
  for (const m of MODELS) {
    test(`${m.name}, ordinary bodies: same parse and validation result, and the fast path answers most of them`, () => {
      const fast = differential(m, false, 150);
      assert.ok(fast >= 150 * 0.5, `fast path answered ${fast} of 150`);
    });
    test(`${m.name}, mutated bodies: same parse and validation result`, () => {
      differential(m, true, 300);
    });
  }
});

describe('fast path: taken for ordinary bodies', () => {
  const phones = Array.from({ length: 50 }, (_, i) => `+4915100000${String(i).padStart(3, '0')}`);
  const ordinary: [Model<unknown>, string, PathParam[]?][] = [
    [TriggerAutomation, JSON.stringify({ automation_id: 7, contacts: phones.map((p, i) => ({ phone: p, first_name: 'Ada', last_name: 'Lovelace', variables: { order_id: `A-${i}`, n: i, f: 1.5, l: [1, null, true], o: { é: '😀' } } })) })],
    [TriggerAutomation, '{"automation_id":7,"contacts":[{"phone":"1","image_url":"https://x/a.png"}],"url":"http://y","url2":null}'],
    [ConnectorSend, JSON.stringify({ campaign_id: 3, contacts: phones.map((phone) => ({ phone })) })],
    [ManageSegmentContacts, JSON.stringify({ contacts: phones, mode: 'delete', use_hashed_phone: true }), [{ name: 'segment_id', raw: '5' }]],
    [CreateSegment, '{"name":"VIP 😀"}'],
  ];
  for (const [model, json, path] of ordinary) {
    test(`${model.name} ${json.slice(0, 60)}…`, () => {
      const body = parseBody(Buffer.from(json), 'application/json; charset=utf-8');
      assert.ok(fastAnswers(model, body), 'the fast path declined');
      const got = validateRequest(model, body, path);
      assert.ok(got.ok);
      assert.deepStrictEqual(got, validateRequest(model, exactParse(Buffer.from(json)), path));
    });
  }
  test('variables keep the exact path types: null-prototype objects, numbers, nested lists', () => {
    const body = parseBody(Buffer.from('{"automation_id":1,"contacts":[{"phone":"1","variables":{"b":1,"a":[2.5,{"__proto__":3}],"0":"z"}}]}'), 'application/json');
    assert.ok(fastAnswers(TriggerAutomation, body));
    const got = validateRequest(TriggerAutomation, body);
    assert.ok(got.ok);
    const vars = got.body.contacts[0].variables as Record<string, unknown>;
    assert.equal(Object.getPrototypeOf(vars), null);
    assert.deepEqual(Object.keys(vars), ['0', 'b', 'a']);
    assert.equal(Object.getPrototypeOf((vars.a as unknown[])[1]), null);
    assert.deepEqual(Object.keys((vars.a as Record<string, unknown>[])[1]), ['__proto__']);
  });
  test('an int written as 7.0 or -0 gives what the exact path gives (7, 0)', () => {
    for (const [json, id] of [['{"campaign_id":7.0,"contacts":[{"phone":"1"}]}', 7], ['{"campaign_id":-0,"contacts":[{"phone":"1"}]}', 0]] as const) {
      const body = parseBody(Buffer.from(json), 'application/json');
      assert.ok(fastAnswers(ConnectorSend, body));
      const got = validateRequest(ConnectorSend, body);
      assert.ok(got.ok && Object.is(got.body.campaign_id, id));
    }
  });
});

describe('fast path: declined where the two readings could differ', () => {
  const declined: [Model<unknown>, string][] = [
    [ConnectorSend, '{"campaign_id":"7","contacts":[{"phone":"1"}]}'], // lax str -> int
    [ConnectorSend, '{"campaign_id":true,"contacts":[{"phone":"1"}]}'], // lax bool -> int
    [ConnectorSend, '{"campaign_id":9007199254740993,"contacts":[{"phone":"1"}]}'], // bigint in the exact path
    [ConnectorSend, '{"campaign_id":NaN,"contacts":[{"phone":"1"}]}'], // JSON.parse refuses
    [ConnectorSend, '{"campaign_id":1,"contacts":[{"phone":"\\ud800"}]}'], // lone surrogate: string_unicode
    [ConnectorSend, '{"campaign_id":1,"contacts":[]}'], // too short
    [TriggerAutomation, '{"automation_id":1,"contacts":[{"phone":"1","variables":{"n":12345678901234567890}}]}'], // bigint in variables
    [TriggerAutomation, '{"automation_id":1,"contacts":[{"phone":"1","variables":{"n":-0}}]}'], // 0 or -0
    [TriggerAutomation, '{"automation_id":1,"contacts":[{"phone":"1","variables":{"n":1e400}}]}'], // inf or a long int
    [TriggerAutomation, '{"automation_id":1,"contacts":[{"phone":"1","image_url":"ftp://x"}]}'], // pattern
    [ManageSegmentContacts, '{"contacts":[],"mode":"add","use_hashed_phone":1}'], // lax int -> bool
  ];
  for (const [model, json] of declined) {
    test(`${model.name} ${json}`, () => {
      const body = parseBody(Buffer.from(json), 'application/json');
      assert.ok(!fastAnswers(model, body));
      assert.deepStrictEqual(validateRequest(model, body), validateRequest(model, exactParse(Buffer.from(json))));
    });
  }
  test('bodies the exact parser refuses with 400 are not read by JSON.parse alone', () => {
    const deep = Buffer.from(`{"name":"x","d":${'['.repeat(513)}${']'.repeat(513)}}`);
    const longInt = Buffer.from(`{"name":"x","n":${'1'.repeat(4301)}}`);
    for (const raw of [deep, longInt]) assert.equal(parseBody(raw, 'application/json').kind, 'unparseable');
    const justDeepEnough = Buffer.from(`{"name":"x","d":${'['.repeat(511)}${']'.repeat(511)}}`);
    const justShortEnough = Buffer.from(`{"name":"x","n":${'1'.repeat(4300)}}`);
    for (const raw of [justDeepEnough, justShortEnough]) {
      const body = parseBody(raw, 'application/json');
      assert.equal(body.kind, 'value');
      assert.deepStrictEqual(validateRequest(CreateSegment, body), validateRequest(CreateSegment, exactParse(raw)));
    }
  });
});
