/**
 * Tags, contact facts and dynamic segments (docs/segments.md "Dynamic segments", docs/contacts.md
 * "Tags and facts"), against the real server and database:
 *
 * - the filter language: randomly generated contacts and filters (fast-check, fixed seed), each
 *   filter's members (GET members of a dynamic segment, all pages) and preview count compared as a set
 *   with a reference evaluator written here over the same contacts, covering every operator and every
 *   condition kind (the run asserts each was drawn and that filters matched neither always nobody nor
 *   always everybody);
 * - refusals: each rule of the language answers 422 with `loc` inside the filter and the reason
 *   (unknown op, wrong value type, more than 50 conditions, depth over 5, bad duration, unknown field,
 *   unknown key, a segment that is not a static one of the company); huge and deeply nested filters
 *   422; unknown attributes match nobody; injection attempts in names and values are plain data;
 * - public 4.2 on a dynamic segment: 409 with the spec's body; a campaign send to a dynamic segment
 *   keeps the recipients of its fan-out;
 * - tags: PUT replaces, POST …/contacts/tags adds / removes (matched, not_found), more than 100 refused,
 *   the contact view and the CSV export show them, the export imports back unchanged;
 * - facts: last_sent_at / last_delivered_at / last_read_at come from the contact's messages, whoever wrote them;
 *   country is computed at upsert and, for contacts stored without it, before a country filter.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import { sql } from 'kysely';
import { eventually, FakeClock, startTestServer, type TestServer } from '../helpers/server.ts';
import { filterCost, MAX_FILTER_COST, parseFilter, textTime } from '../../src/domain/segment-filter.ts';

const SEED = 20261127;
const DAY = 86_400_000;
const clock = new FakeClock(Math.floor(Date.now() / 1000) * 1000);
let s: TestServer;
before(async () => { s = await startTestServer({ clock }); });
after(() => s.close());

const db = () => s.service.deps.database.db;

async function company(): Promise<number> {
  return (await s.admin('POST', '/admin/companies', { name: 'Audience Co', subscription_active: true, default_country: 'DE' }, 201)).company_id;
}

/** Every member of a segment, all pages. */
async function allMembers(segmentId: number): Promise<string[]> {
  const out: string[] = [];
  let afterId = 0;
  for (;;) {
    const page = await s.admin('GET', `/admin/segments/${segmentId}/members?after=${afterId}&limit=7`);
    out.push(...page.members.map((m: any) => m.phone));
    if (page.next_after === null) return out.sort();
    afterId = page.next_after;
  }
}

// ------------------------------------------------------------------------------------------------
// The reference evaluator
// ------------------------------------------------------------------------------------------------

interface RefMessage { sent_at: number | null; delivered_at: number | null; read_at: number | null; failed_at: number | null; campaign_id: number | null }
interface RefContact {
  contact_id: number; phone: string; first_name: string | null; last_name: string | null; country: string | null;
  created_at: number; opted_out: boolean; last_inbound_at: number | null; last_sent_at: number | null;
  last_delivered_at: number | null; last_read_at: number | null; variables: Record<string, unknown>; tags: string[];
  segments: Set<number>; messages: RefMessage[];
}

const UNIT: Record<string, number> = { m: 60_000, h: 3_600_000, d: DAY };
const NUM = /^-?[0-9]+([.][0-9]+)?([eE][+-]?[0-9]{1,3})?$/;

function refTime(v: string, now: number): number | null {
  const rel = /^-([1-9][0-9]*)([mhd])$/.exec(v);
  if (rel) return now - Number(rel[1]) * UNIT[rel[2]];
  return textTime(v) ?? null;
}

const ms = (d: unknown) => (d === null || d === undefined ? null : new Date(d as string).getTime());

function text(v: unknown): string | null {
  if (v === undefined || v === null) return null;
  return typeof v === 'string' ? v : String(v);
}

function cmpOne(t: string | number | null, op: string, v: unknown, isTime: boolean, now: number): boolean {
  if (t === null) return false;
  const ordered = ['gt', 'gte', 'lt', 'lte'].includes(op);
  const order = (a: number | string, b: number | string) => {
    const c = a < b ? -1 : a > b ? 1 : 0;
    return op === 'gt' ? c > 0 : op === 'gte' ? c >= 0 : op === 'lt' ? c < 0 : op === 'lte' ? c <= 0 : c === 0;
  };
  if (isTime) {
    const b = refTime(v as string, now);
    return b !== null && order(t as number, b);
  }
  const s = t as string;
  if (typeof v === 'number') return NUM.test(s) && order(Number(s), v);
  if (typeof v === 'boolean') return s === String(v);
  const str = v as string;
  if (ordered) {
    const time = refTime(str, now);
    if (time !== null) {
      const a = textTime(s);
      return a !== undefined && order(a, time);
    }
    return order([...s].map((c) => c.codePointAt(0)!.toString(16).padStart(6, '0')).join(''), [...str].map((c) => c.codePointAt(0)!.toString(16).padStart(6, '0')).join(''));
  }
  if (op === 'contains') return s.includes(str);
  if (op === 'starts_with') return s.startsWith(str);
  return s === str;
}

function cmp(t: string | number | null, op: string, value: unknown, isTime: boolean, now: number): boolean {
  if (op === 'exists') return t !== null;
  if (op === 'not_exists') return t === null;
  const values = op === 'in' || op === 'not_in' ? (value as unknown[]) : [value];
  const any = values.some((v) => cmpOne(t, op, v, isTime, now));
  return op === 'ne' || op === 'not_in' ? t !== null && !any : any;
}

const MESSAGE_TIME = { sent: 'sent_at', delivered: 'delivered_at', read: 'read_at', failed: 'failed_at' } as const;

function evaluate(f: any, c: RefContact, now: number): boolean {
  if (f.all) return f.all.every((x: any) => evaluate(x, c, now));
  if (f.any) return f.any.some((x: any) => evaluate(x, c, now));
  if (f.not) return !evaluate(f.not, c, now);
  if ('attribute' in f) return cmp(text(c.variables[f.attribute]), f.op, f.value, false, now);
  if ('field' in f) {
    if (f.field === 'opted_out') return f.op === 'eq' ? c.opted_out === f.value : c.opted_out !== f.value;
    if (['first_name', 'last_name', 'phone', 'country'].includes(f.field)) {
      const t = f.field === 'country' ? (c.country || null) : (c as any)[f.field];
      return cmp(t, f.op, f.value, false, now);
    }
    return cmp((c as any)[f.field], f.op, f.value, true, now);
  }
  if ('tag' in f) return c.tags.includes(f.tag);
  if ('segment' in f) return c.segments.has(f.segment);
  if ('replied_within' in f) return c.last_inbound_at !== null && c.last_inbound_at >= now - Number(f.replied_within.slice(0, -1)) * UNIT[f.replied_within.slice(-1)];
  if ('message' in f) {
    const since = now - Number(f.within.slice(0, -1)) * UNIT[f.within.slice(-1)];
    return c.messages.some((m) => {
      const at = m[MESSAGE_TIME[f.message as keyof typeof MESSAGE_TIME]];
      return at !== null && at >= since && (f.campaign_id === undefined || m.campaign_id === f.campaign_id) && f.automation_id === undefined;
    });
  }
  throw new Error(`unknown condition ${JSON.stringify(f)}`);
}

async function loadContacts(companyId: number): Promise<RefContact[]> {
  const { rows } = await sql<any>`
    SELECT c.*, ARRAY(SELECT segment_id FROM segment_members m WHERE m.contact_id = c.contact_id) AS segs
    FROM contacts c WHERE c.company_id = ${companyId} AND c.erased_at IS NULL ORDER BY c.contact_id`.execute(db());
  const { rows: msgs } = await sql<any>`
    SELECT m.phone, m.status, m.sent_at, m.delivered_at, m.read_at, m.failed_at, CASE WHEN b.kind = 'campaign' THEN b.source_id END AS campaign_id
    FROM messages m JOIN batches b ON b.batch_id = m.batch_id WHERE m.company_id = ${companyId}`.execute(db());
  // The facts from the contact's messages: the latest time each reached sent (a delivered or read one
  // counts), delivered (a read one counts) and read.
  const latest = (phone: string, statuses: string[], key: string) => {
    const times = msgs.filter((m: any) => m.phone === phone && statuses.includes(m.status) && m[key] !== null).map((m: any) => ms(m[key])!);
    return times.length ? Math.max(...times) : null;
  };
  return rows.map((r: any) => ({
    contact_id: Number(r.contact_id), phone: r.phone, first_name: r.first_name, last_name: r.last_name, country: r.country,
    created_at: ms(r.created_at)!, opted_out: r.opted_out, last_inbound_at: ms(r.last_inbound_at),
    last_sent_at: latest(r.phone, ['sent', 'delivered', 'read'], 'sent_at'),
    last_delivered_at: latest(r.phone, ['delivered', 'read'], 'delivered_at'), last_read_at: latest(r.phone, ['read'], 'read_at'),
    variables: r.variables ?? {}, tags: r.tags ?? [],
    segments: new Set((r.segs ?? []).map(Number)),
    messages: msgs.filter((m: any) => m.phone === r.phone).map((m: any) => ({
      sent_at: ms(m.sent_at), delivered_at: ms(m.delivered_at), read_at: ms(m.read_at), failed_at: ms(m.failed_at), campaign_id: m.campaign_id === null ? null : Number(m.campaign_id),
    })),
  }));
}

// ------------------------------------------------------------------------------------------------
// Generators
// ------------------------------------------------------------------------------------------------

const INJECT = `x'); DROP TABLE contacts; --`;
const VAR_NAMES = ['city', 'score', 'joined', 'flag', 'nobody_has_this', INJECT];
const TEXTS = ['Berlin', 'Ber', 'berlin', 'München', 'Paris', '7', '10', '10.0', 'abc', '2026-01-15', INJECT, '%_\\'];
const NUMBERS = [-3, 0, 1, 2.5, 7, 10, 100];
const TIMES = ['-2h', '-1d', '-7d', '-30d', '-400d', '2026-01-01', '2025-06-01T00:00:00Z'];
const TAGS = ['vip', 'berlin', 'trial', 'ä-tag', INJECT];
const FIRST = ['Ada', 'Alan', 'Grace', 'Émile', null];
const PHONES = [
  ...Array.from({ length: 40 }, (_, i) => `+491511234${String(5000 + i).padStart(4, '0')}`),
  '+33612345678', '+33612345679', '+447911123456', '+447911123457', '+14155552671',
];

const contactArb = fc.record({
  first_name: fc.constantFrom(...FIRST),
  last_name: fc.constantFrom('Lovelace', 'Turing', null),
  opted_out: fc.boolean(),
  tags: fc.subarray(TAGS),
  city: fc.option(fc.constantFrom('Berlin', 'berlin', 'München', 'Paris', 'Bern'), { nil: undefined }),
  score: fc.option(fc.oneof(fc.constantFrom(...NUMBERS), fc.constantFrom('7', '10.0', 'abc', '-3')), { nil: undefined }),
  joined: fc.option(fc.constantFrom('2026-01-15', '2025-12-01T10:00:00Z', '2026-02-30', 'soon'), { nil: undefined }),
  flag: fc.option(fc.boolean(), { nil: undefined }),
});

const OPS_ALL = ['eq', 'ne', 'in', 'not_in', 'contains', 'starts_with', 'exists', 'not_exists', 'gt', 'gte', 'lt', 'lte'];
const scalar = fc.oneof(fc.constantFrom(...TEXTS), fc.constantFrom(...NUMBERS), fc.boolean());

function valueFor(op: string, kind: 'attribute' | 'text' | 'time', texts: string[]): fc.Arbitrary<unknown> | null {
  if (op === 'exists' || op === 'not_exists') return null;
  if (kind === 'time') return fc.constantFrom(...TIMES);
  const str = fc.constantFrom(...texts);
  if (kind === 'text') return op === 'in' || op === 'not_in' ? fc.array(str, { minLength: 1, maxLength: 3 }) : str;
  if (op === 'contains' || op === 'starts_with') return str;
  if (op === 'in' || op === 'not_in') return fc.array(scalar, { minLength: 1, maxLength: 3 });
  if (['gt', 'gte', 'lt', 'lte'].includes(op)) return fc.oneof(str, fc.constantFrom(...NUMBERS), fc.constantFrom(...TIMES));
  return scalar;
}

function withValue(base: Record<string, unknown>, op: string, v: fc.Arbitrary<unknown> | null) {
  return v === null ? fc.constant({ ...base, op }) : v.map((value) => ({ ...base, op, value }));
}

function conditionArb(ctx: { segmentId: number; campaignId: number; unsentCampaignId: number }): fc.Arbitrary<any> {
  const attribute = fc.tuple(fc.constantFrom(...VAR_NAMES), fc.constantFrom(...OPS_ALL))
    .chain(([name, op]) => withValue({ attribute: name }, op, valueFor(op, 'attribute', TEXTS)));
  const textField = fc.tuple(fc.constantFrom('first_name', 'last_name', 'phone', 'country'), fc.constantFrom(...OPS_ALL))
    .chain(([field, op]) => withValue({ field }, op, valueFor(op, 'text', ['Ada', 'Al', 'Grace', 'Émile', 'Lovelace', '+49151', '+44', 'DE', 'FR', 'GB', 'US', INJECT])));
  const timeField = fc.tuple(fc.constantFrom('created_at', 'last_inbound_at', 'last_sent_at', 'last_delivered_at', 'last_read_at'), fc.constantFrom('gt', 'gte', 'lt', 'lte', 'exists', 'not_exists'))
    .chain(([field, op]) => withValue({ field }, op, valueFor(op, 'time', [])));
  return fc.oneof(
    attribute, attribute, textField, timeField,
    fc.record({ field: fc.constant('opted_out'), op: fc.constantFrom('eq', 'ne'), value: fc.boolean() }),
    fc.constantFrom(...TAGS, 'nobody-tag').map((tag) => ({ tag })),
    fc.constant({ segment: ctx.segmentId }),
    fc.record({ message: fc.constantFrom('sent', 'delivered', 'read', 'failed'), within: fc.constantFrom('1h', '2d', '30d') })
      .chain((m) => fc.oneof(fc.constant(m), fc.constant({ ...m, campaign_id: ctx.campaignId }), fc.constant({ ...m, campaign_id: ctx.unsentCampaignId }))),
    fc.constantFrom('1h', '3d', '30d').map((d) => ({ replied_within: d })),
  );
}

function filterArb(ctx: { segmentId: number; campaignId: number; unsentCampaignId: number }): fc.Arbitrary<any> {
  const leaf = conditionArb(ctx);
  const { node } = fc.letrec<{ node: any }>((tie) => ({
    node: fc.oneof({ depthSize: 'small', withCrossShrink: true, maxDepth: 3 },
      leaf,
      fc.array(tie('node'), { minLength: 1, maxLength: 3 }).map((all) => ({ all })),
      fc.array(tie('node'), { minLength: 1, maxLength: 3 }).map((any) => ({ any })),
      tie('node').map((n) => ({ not: n }))),
  }));
  return node;
}

function kindsOf(f: any, seen: Set<string>): void {
  if (f.all) { seen.add('all'); f.all.forEach((x: any) => kindsOf(x, seen)); return; }
  if (f.any) { seen.add('any'); f.any.forEach((x: any) => kindsOf(x, seen)); return; }
  if (f.not) { seen.add('not'); kindsOf(f.not, seen); return; }
  const kind = 'attribute' in f ? 'attribute' : 'field' in f ? (f.field === 'opted_out' ? 'opted_out' : ['first_name', 'last_name', 'phone', 'country'].includes(f.field) ? 'text' : 'time') : Object.keys(f)[0];
  seen.add(kind);
  if (f.op) seen.add(`${kind}:${f.op}`);
}

// ------------------------------------------------------------------------------------------------

describe('the filter language against a reference evaluator', () => {
  test('random contacts and filters: members and preview count equal the reference set', async () => {
    const id = await company();
    const people = fc.sample(contactArb, { seed: SEED, numRuns: PHONES.length });
    const put = await s.admin('PUT', `/admin/companies/${id}/contacts`, {
      contacts: PHONES.map((phone, i) => {
        const p = people[i];
        const variables: Record<string, unknown> = {};
        for (const k of ['city', 'score', 'joined', 'flag'] as const) if (p[k] !== undefined) variables[k] = p[k];
        return { phone, first_name: p.first_name, last_name: p.last_name, opted_out: p.opted_out, tags: p.tags, variables };
      }),
    });
    assert.equal(put.created, PHONES.length);
    // A static segment, a campaign sent to some contacts, receipts and replies written by other writers.
    const segmentId = (await s.admin('POST', `/admin/companies/${id}/segments`, { name: 'Static' }, 201)).segment_id;
    await s.admin('POST', `/admin/segments/${segmentId}/members`, { mode: 'add', contacts: PHONES.filter((_, i) => i % 3 === 0) });
    const camp = await s.admin('POST', `/admin/companies/${id}/campaigns`, { name: 'C', template: { body: 'Hi' } }, 201);
    const recipients = PHONES.filter((_, i) => i % 2 === 0);
    const sent = await s.admin('POST', `/admin/campaigns/${camp.campaign_id}/sends`, { contacts: recipients }, 202);
    await eventually(async () => (await s.admin('GET', `/admin/batches/${sent.batch_id}`)).status === 'completed');
    const now = clock.now();
    const at = (d: number) => new Date(now - d).toISOString();
    await sql`UPDATE messages SET status = 'read', delivered_at = ${at(3 * DAY)}::timestamptz, read_at = ${at(DAY / 2)}::timestamptz
      WHERE batch_id = ${sent.batch_id}::uuid AND seq % 4 = 1`.execute(db());
    await sql`UPDATE messages SET status = 'delivered', delivered_at = ${at(40 * 60_000)}::timestamptz
      WHERE batch_id = ${sent.batch_id}::uuid AND seq % 4 = 2`.execute(db());
    await sql`UPDATE messages SET status = 'failed', failed_at = ${at(10 * DAY)}::timestamptz
      WHERE batch_id = ${sent.batch_id}::uuid AND seq % 4 = 3 AND status = 'sent'`.execute(db());
    await sql`UPDATE contacts SET last_inbound_at = CASE WHEN contact_id % 3 = 0 THEN ${at(2 * 3_600_000)}::timestamptz
      WHEN contact_id % 3 = 1 THEN ${at(5 * DAY)}::timestamptz END WHERE company_id = ${id}`.execute(db());
    // Contacts stored before migration 026 have no country yet: the filter computes it first.
    await sql`UPDATE contacts SET country = NULL WHERE company_id = ${id} AND contact_id % 2 = 0`.execute(db());

    const dyn = await s.admin('POST', `/admin/companies/${id}/segments`, { name: 'Dynamic', filter: { tag: 'vip' } }, 201);
    assert.equal(dyn.kind, 'dynamic');
    // A campaign of the company that sent nothing (another company's campaign is refused: see below).
    const unsent = await s.admin('POST', `/admin/companies/${id}/campaigns`, { name: 'Unsent', template: { body: 'Hi' } }, 201);
    const ctx = { segmentId, campaignId: camp.campaign_id, unsentCampaignId: unsent.campaign_id };
    // Filters within the work limit (docs/segments.md "Limits"); those over it are refused, tested below.
    const filters = fc.sample(filterArb(ctx), { seed: SEED + 1, numRuns: 200 })
      .filter((f) => filterCost(parseFilter(f, { limitCost: false })) <= MAX_FILTER_COST).slice(0, 160);
    assert.ok(filters.length >= 150, `${filters.length} filters within the limit`);
    const seen = new Set<string>();
    let some = 0;
    let all = 0;
    for (const filter of filters) {
      kindsOf(filter, seen);
      const patched = await s.admin('PATCH', `/admin/segments/${dyn.segment_id}`, { filter });
      const contacts = await loadContacts(id);
      const expected = contacts.filter((c) => evaluate(filter, c, now)).map((c) => c.phone).sort();
      const got = await allMembers(dyn.segment_id);
      assert.deepEqual(got, expected, `filter ${JSON.stringify(filter)}`);
      assert.equal(patched.members, expected.length);
      const preview = await s.admin('POST', `/admin/companies/${id}/segments/preview`, { filter });
      assert.equal(preview.count, expected.length, `preview ${JSON.stringify(filter)}`);
      assert.deepEqual(preview.sample.map((c: any) => c.phone), contacts.filter((c) => evaluate(filter, c, now)).slice(0, 10).map((c) => c.phone));
      if (expected.length > 0 && expected.length < contacts.length) some++;
      if (expected.length === contacts.length) all++;
    }
    for (const k of ['all', 'any', 'not', 'attribute', 'text', 'time', 'opted_out', 'tag', 'segment', 'message', 'replied_within']) assert.ok(seen.has(k), `drew ${k}`);
    for (const op of OPS_ALL) assert.ok(seen.has(`attribute:${op}`) && seen.has(`text:${op}`), `drew op ${op}`);
    assert.ok(some > filters.length / 4, `${some} filters matched some but not all contacts`);
    assert.ok(all < filters.length / 2);
    // Every contact has its country now; injection attempts left the tables alone.
    const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM contacts WHERE company_id = ${id} AND country IS NULL`.execute(db());
    assert.equal(rows[0].n, 0);
    assert.deepEqual((await loadContacts(id)).map((c) => [c.phone, c.country]).filter(([p]) => !(p as string).startsWith('+49')).sort(),
      [['+14155552671', 'US'], ['+33612345678', 'FR'], ['+33612345679', 'FR'], ['+447911123456', 'GG'], ['+447911123457', 'GG']]);
  });
});

describe('refusals: 422 with loc and reason, never 5xx, nothing stored', () => {
  const cases: [filter: unknown, loc: (string | number)[], reason: RegExp][] = [
    [{ attribute: 'city', op: 'equals', value: 'x' }, ['op'], /unknown op "equals"/],
    [{ all: [{ tag: 'a' }, { attribute: 'city', op: 'contains', value: 5 }] }, ['all', 1, 'value'], /"contains" needs a string/],
    [{ attribute: 'n', op: 'gt', value: true }, ['value'], /"gt" needs a number, a time or a string/],
    [{ field: 'created_at', op: 'gt', value: 'yesterday' }, ['value'], /needs a time/],
    [{ field: 'created_at', op: 'eq', value: '-1d' }, ['op'], /does not apply to the time created_at/],
    [{ field: 'first_name', op: 'eq', value: 3 }, ['value'], /needs a string/],
    [{ field: 'opted_out', op: 'eq', value: 'yes' }, ['value'], /true or false/],
    [{ field: 'shoe_size', op: 'eq', value: '42' }, ['field'], /unknown field "shoe_size"/],
    [{ any: [{ message: 'read', within: '7 days' }] }, ['any', 0, 'within'], /bad duration/],
    [{ replied_within: '0d' }, ['replied_within'], /bad duration/],
    [{ message: 'clicked', within: '7d' }, ['message'], /message status/],
    [{ attribute: 'city', op: 'exists', value: 'x' }, ['value'], /takes no value/],
    [{ attribute: 'city', op: 'eq' }, ['value'], /needs a value/],
    [{ attribute: 'city', op: 'in', value: [] }, ['value'], /list of 1 to 100/],
    [{ tag: 'a', extra: 1 }, ['extra'], /unknown key "extra"/],
    [{ all: [] }, ['all'], /list of 1 to 50/],
    [{ nothing: true }, [], /not a filter/],
    [{ tag: 'x'.repeat(65) }, ['tag'], /1 to 64 characters/],
    [{ all: Array.from({ length: 51 }, () => ({ tag: 'a' })) }, ['all'], /list of 1 to 50/],
    [{ all: [{ all: Array.from({ length: 30 }, () => ({ tag: 'a' })) }, { any: Array.from({ length: 30 }, () => ({ tag: 'b' })) }] }, ['all', 1, 'any', 20], /more than 50 conditions/],
    [{ not: { not: { not: { not: { not: { tag: 'a' } } } } } }, ['not', 'not', 'not', 'not', 'not'], /nested too deep/],
    [{ segment: 999999 }, ['segment'], /not a static segment of this company/],
  ];

  test('each rule of the language', async () => {
    const id = await company();
    const before = (await s.admin('GET', `/admin/companies/${id}/segments`)).segments.length;
    for (const [filter, loc, reason] of cases) {
      for (const [method, path, body] of [
        ['POST', `/admin/companies/${id}/segments`, { name: 'Bad', filter }],
        ['POST', `/admin/companies/${id}/segments/preview`, { filter }],
      ] as const) {
        const res = await fetch(s.url + path, { method, headers: { authorization: `Bearer ${(await import('../helpers/server.ts')).ADMIN_TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
        const json = await res.json() as any;
        assert.equal(res.status, 422, `${JSON.stringify(filter).slice(0, 80)}: ${JSON.stringify(json)}`);
        assert.deepEqual(json.detail[0].loc, ['body', 'filter', ...loc], JSON.stringify(filter).slice(0, 80));
        assert.match(json.detail[0].msg, reason);
      }
    }
    assert.equal((await s.admin('GET', `/admin/companies/${id}/segments`)).segments.length, before);
  });

  test('huge and deeply nested filters, a dynamic segment named as a member condition, a static segment given a filter', async () => {
    const id = await company();
    let deep: any = { tag: 'a' };
    for (let i = 0; i < 400; i++) deep = { not: deep };
    const huge = { any: Array.from({ length: 20_000 }, (_, i) => ({ attribute: `v${i}`, op: 'eq', value: i })) };
    for (const filter of [deep, huge, 'vip', ['tag'], 42]) {
      const res = await s.admin('POST', `/admin/companies/${id}/segments/preview`, { filter }, 422);
      assert.equal(res.detail[0].loc[0], 'body');
    }
    const dyn = await s.admin('POST', `/admin/companies/${id}/segments`, { name: 'D', filter: { tag: 'a' } }, 201);
    const bad = await s.admin('POST', `/admin/companies/${id}/segments/preview`, { filter: { any: [{ tag: 'b' }, { segment: dyn.segment_id }] } }, 422);
    assert.deepEqual(bad.detail[0].loc, ['body', 'filter', 'any', 1, 'segment']);
    const stat = await s.admin('POST', `/admin/companies/${id}/segments`, { name: 'S' }, 201);
    assert.deepEqual(await s.admin('PATCH', `/admin/segments/${stat.segment_id}`, { filter: { tag: 'a' } }, 409), { detail: 'Segment is static: its members are kept by hand, it has no filter' });
    // Another company's static segment is not this company's.
    const other = await company();
    const theirs = await s.admin('POST', `/admin/companies/${other}/segments`, { name: 'Theirs' }, 201);
    await s.admin('POST', `/admin/companies/${id}/segments/preview`, { filter: { segment: theirs.segment_id } }, 422);
  });

  test('unknown attributes match nobody; injection attempts are data', async () => {
    const id = await company();
    // Variable names are identifiers (docs/contacts.md); values and tags may hold anything.
    await s.admin('PUT', `/admin/companies/${id}/contacts`, { contacts: [{ phone: '+4915112360001', variables: { note: INJECT }, tags: [INJECT] }, { phone: '+4915112360002' }] });
    assert.deepEqual(await s.admin('POST', `/admin/companies/${id}/segments/preview`, { filter: { attribute: 'nobody', op: 'eq', value: 'x' } }), { count: 0, sample: [] });
    assert.equal((await s.admin('POST', `/admin/companies/${id}/segments/preview`, { filter: { not: { attribute: 'nobody', op: 'exists' } } })).count, 2);
    for (const filter of [{ attribute: INJECT, op: 'eq', value: INJECT }, { tag: INJECT }, { field: 'first_name', op: 'not_in', value: [INJECT, "' OR 1=1 --"] }, { attribute: 'a\\"', op: 'starts_with', value: '%' }]) {
      const res = await s.admin('POST', `/admin/companies/${id}/segments/preview`, { filter });
      assert.ok(res.count >= 0 && res.count <= 2);
    }
    assert.equal((await s.admin('POST', `/admin/companies/${id}/segments/preview`, { filter: { attribute: INJECT, op: 'eq', value: INJECT } })).count, 0);
    assert.equal((await s.admin('POST', `/admin/companies/${id}/segments/preview`, { filter: { attribute: 'note', op: 'eq', value: INJECT } })).count, 1);
    assert.equal((await s.admin('POST', `/admin/companies/${id}/segments/preview`, { filter: { tag: INJECT } })).count, 1);
  });
});

describe('dynamic segments in the rest of the service', () => {
  test('GET shows kind, filter, members_total; the limit of 20 counts them; members follow the contacts; 4.2 answers 409', async () => {
    const c = await s.company({ default_country: 'DE' });
    const id = c.companyId;
    await s.admin('PUT', `/admin/companies/${id}/contacts`, { contacts: [{ phone: '+4915112370001', tags: ['vip'] }, { phone: '+4915112370002' }] });
    const filter = { tag: 'vip' };
    const dyn = await s.admin('POST', `/admin/companies/${id}/segments`, { name: 'VIP', filter }, 201);
    const got = await s.admin('GET', `/admin/segments/${dyn.segment_id}`);
    assert.deepEqual({ ...got, created_at: '' }, { segment_id: dyn.segment_id, company_id: id, name: 'VIP', kind: 'dynamic', filter, members: 1, members_total: 1, created_at: '' });
    await s.admin('POST', `/admin/companies/${id}/contacts/tags`, { contacts: ['015112370002'], add: ['vip'] });
    assert.deepEqual(await allMembers(dyn.segment_id), ['+4915112370001', '+4915112370002']);
    const page = await s.admin('GET', `/admin/segments/${dyn.segment_id}/members`);
    assert.equal(page.members_total, 2);
    assert.equal(page.members[0].added_at, null);

    const answer = await s.api(`/api/segments/${dyn.segment_id}/contacts`, { key: c.key, body: { contacts: ['+4915112370001'], mode: 'add' } });
    assert.equal(answer.status, 409);
    assert.equal(answer.text, '{"detail":"Segment is dynamic: its members follow its filter"}');
    assert.deepEqual(await s.admin('POST', `/admin/segments/${dyn.segment_id}/members`, { mode: 'add', contacts: ['x'] }, 409), { detail: 'Segment is dynamic: its members follow its filter' });
    await s.admin('POST', `/admin/companies/${id}/segments`, { name: 'S' }, 201);

    for (let i = 2; i < 20; i++) await s.admin('POST', `/admin/companies/${id}/segments`, { name: `D${i}`, filter: { tag: `t${i}` } }, 201);
    await s.admin('POST', `/admin/companies/${id}/segments`, { name: 'one too many', filter }, 400);
    const listed = (await s.admin('GET', `/admin/companies/${id}/segments`)).segments;
    assert.equal(listed.length, 20);
    assert.equal(listed.find((x: any) => x.segment_id === dyn.segment_id).members, 2);
  });

  test('a campaign send to a dynamic segment keeps the recipients of its fan-out; the contact view reads the facts from its messages', async () => {
    const id = await company();
    const phones = ['+4915112380001', '+4915112380002', '+4915112380003'];
    await s.admin('PUT', `/admin/companies/${id}/contacts`, { contacts: phones.map((phone, i) => ({ phone, variables: { city: i < 2 ? 'Berlin' : 'Paris' } })) });
    const dyn = await s.admin('POST', `/admin/companies/${id}/segments`, { name: 'Berlin', filter: { attribute: 'city', op: 'eq', value: 'Berlin' } }, 201);
    const camp = await s.admin('POST', `/admin/companies/${id}/campaigns`, { name: 'C', template: { body: 'Hi' } }, 201);
    const sent = await s.admin('POST', `/admin/campaigns/${camp.campaign_id}/sends`, { segment_id: dyn.segment_id }, 202);
    assert.equal(sent.plan.total, 2, 'the plan counts the members now');
    await eventually(async () => (await s.admin('GET', `/admin/batches/${sent.batch_id}`)).status === 'completed');
    // Evaluated once, when the send fanned out: a contact that matches later is not added to it.
    await s.admin('PATCH', `/admin/companies/${id}/contacts/%2B4915112380003`, { variables: { city: 'Berlin' } });
    const msgs = (await s.admin('GET', `/admin/batches/${sent.batch_id}/messages`)).messages;
    assert.deepEqual(msgs.map((m: any) => m.phone).sort(), phones.slice(0, 2));
    assert.equal((await s.admin('GET', `/admin/segments/${dyn.segment_id}`)).members_total, 3);

    const view = await s.admin('GET', `/admin/companies/${id}/contacts/%2B4915112380001`);
    assert.ok(view.last_sent_at);
    assert.equal(view.last_read_at, null);
    assert.equal(view.country, 'DE');
    const readAt = new Date(clock.now() + 60_000).toISOString();
    await sql`UPDATE messages SET status = 'read', delivered_at = ${readAt}::timestamptz, read_at = ${readAt}::timestamptz WHERE batch_id = ${sent.batch_id}::uuid`.execute(db());
    const after = await s.admin('GET', `/admin/companies/${id}/contacts/%2B4915112380001`);
    assert.equal(after.last_read_at, readAt);
    assert.equal(after.last_delivered_at, readAt);
  });
});

describe('tags', () => {
  test('PUT replaces, POST …/tags adds and removes, more than 100 refused, view and export show them, the export imports back unchanged', async () => {
    const id = await company();
    await s.admin('PUT', `/admin/companies/${id}/contacts`, { contacts: [{ phone: '+4915112390001', tags: ['b', 'a', 'a'] }, { phone: '+4915112390002', tags: ['x|y', 'z\\'] }] });
    assert.deepEqual((await s.admin('GET', `/admin/companies/${id}/contacts/%2B4915112390001`)).tags, ['a', 'b']);
    const change = await s.admin('POST', `/admin/companies/${id}/contacts/tags`, { contacts: ['+4915112390001', '015112390002', '+4915112399999', 'nope'], add: ['vip', 'c'], remove: ['a', 'c'] });
    assert.deepEqual(change, { matched: 2, not_found: 2 });
    assert.deepEqual((await s.admin('GET', `/admin/companies/${id}/contacts/%2B4915112390001`)).tags, ['b', 'vip']);
    assert.deepEqual((await s.admin('GET', `/admin/companies/${id}/contacts/%2B4915112390002`)).tags, ['vip', 'x|y', 'z\\']);
    await s.admin('PUT', `/admin/companies/${id}/contacts`, { contacts: [{ phone: '+4915112390001' }] });
    assert.deepEqual((await s.admin('GET', `/admin/companies/${id}/contacts/%2B4915112390001`)).tags, ['b', 'vip'], 'absent tags keep the set');
    const many = Array.from({ length: 99 }, (_, i) => `t${i}`);
    const refused = await s.admin('POST', `/admin/companies/${id}/contacts/tags`, { contacts: ['+4915112390001'], add: many }, 422);
    assert.match(refused.detail[0].msg, /more than 100 tags/);
    assert.deepEqual((await s.admin('GET', `/admin/companies/${id}/contacts/%2B4915112390001`)).tags, ['b', 'vip']);
    await s.admin('PUT', `/admin/companies/${id}/contacts`, { contacts: [{ phone: '+4915112390001', tags: ['x'.repeat(65)] }] }, 422);
    await s.admin('PUT', `/admin/companies/${id}/contacts`, { contacts: [{ phone: '+4915112390001', tags: Array.from({ length: 101 }, (_, i) => `t${i}`) }] }, 422);
    await s.admin('POST', `/admin/companies/${id}/contacts/tags`, { contacts: [], add: ['a'] }, 422);
    // `set` replaces the set, then add and remove apply; the list filters by tag and shows the tags.
    assert.deepEqual(await s.admin('POST', `/admin/companies/${id}/contacts/tags`, { contacts: ['+4915112390001'], set: ['s1', 's2'], add: ['s3'], remove: ['s2'] }), { matched: 1, not_found: 0 });
    assert.deepEqual((await s.admin('GET', `/admin/companies/${id}/contacts/%2B4915112390001`)).tags, ['s1', 's3']);
    const vipList = await s.admin('GET', `/admin/companies/${id}/contacts?tag=vip`);
    assert.deepEqual(vipList.contacts.map((c: { phone: string; tags: string[] }) => [c.phone, c.tags]), [['+4915112390002', ['vip', 'x|y', 'z\\']]]);
    await s.admin('GET', `/admin/companies/${id}/contacts?tag=`, undefined, 422);
    await s.admin('POST', `/admin/companies/${id}/contacts/tags`, { contacts: ['+4915112390001'], set: [] });
    assert.deepEqual((await s.admin('GET', `/admin/companies/${id}/contacts/%2B4915112390001`)).tags, []);
    await s.admin('PUT', `/admin/companies/${id}/contacts`, { contacts: [{ phone: '+4915112390001', tags: ['b', 'vip'] }] });

    const { ADMIN_TOKEN } = await import('../helpers/server.ts');
    const csv = await (await fetch(`${s.url}/admin/companies/${id}/contacts/export`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).text();
    assert.equal(csv.split('\n')[0], 'phone,first_name,last_name,opted_out,opt_out_source,opt_out_at,tags,phone_country,last_inbound_at,last_sent_at,last_delivered_at,last_read_at');
    assert.match(csv, /\+4915112390002,,,false,,,vip\|x\\\|y\|z\\\\,DE,,,,/);
    await sql`UPDATE contacts SET tags = '{}' WHERE company_id = ${id}`.execute(db());
    const imp = await (await fetch(`${s.url}/admin/companies/${id}/contact-imports`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'text/csv' }, body: csv })).json() as any;
    await eventually(async () => (await s.admin('GET', `/admin/companies/${id}/contact-imports/${imp.import_id}`)).status === 'completed');
    assert.deepEqual((await s.admin('GET', `/admin/companies/${id}/contacts/%2B4915112390002`)).tags, ['vip', 'x|y', 'z\\']);
  });
});
