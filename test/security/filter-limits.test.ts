/**
 * The work limits of the filter language (docs/segments.md "Limits", docs/security.md "Bounded work
 * per request"), through the operator API on the real server:
 * - happy: the costliest filters the documented limits allow (test/helpers/widest-filters.ts) preview
 *   at 20,000 contacts with the exact count and sample, across many bounded steps of the scan; their
 *   time is reported (a diagnostic, not asserted: the benchmark in docs/benchmarks.md "Filter
 *   previews" measures it at 100,000 and 1,000,000 contacts);
 * - error: one unit over the work budget, one value over the list total, a duration or relative time
 *   over 100 years: 422 naming the place (`loc`) and the limit, never a 500, nothing stored;
 * - security: a `message` condition naming another company's campaign or automation is refused as
 *   another company's segment is.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { COST, MAX_DURATION_DAYS, MAX_FILTER_COST, MAX_LIST, MAX_LIST_TOTAL } from '../../src/domain/segment-filter.ts';
import { scanChunk } from '../../src/domain/dynamic-segments.ts';
import { FakeClock, startTestServer, type TestServer } from '../helpers/server.ts';
import { widestFilters } from '../helpers/widest-filters.ts';

const CONTACTS = 20_000;
/** Every VIP_EVERY-th contact has the tag `vip`. */
const VIP_EVERY = 7;
const clock = new FakeClock(Math.floor(Date.now() / 1000) * 1000);
let s: TestServer;
before(async () => { s = await startTestServer({ clock }); });
after(() => s.close());

const db = () => s.service.deps.database.db;

async function company(): Promise<number> {
  return (await s.admin('POST', '/admin/companies', { name: 'Limits Co', subscription_active: true, default_country: 'DE' }, 201)).company_id;
}

const preview = (id: number, filter: unknown, status = 200) => s.admin('POST', `/admin/companies/${id}/segments/preview`, { filter }, status);

/** The 422 of a filter: its one error's loc (after body.filter) and message. */
async function refused(id: number, filter: unknown): Promise<{ loc: unknown[]; msg: string }> {
  const body = await preview(id, filter, 422);
  assert.equal(body.detail.length, 1);
  const [e] = body.detail;
  assert.deepEqual(e.loc.slice(0, 2), ['body', 'filter']);
  return { loc: e.loc.slice(2), msg: e.msg };
}

describe('the costliest filters the limits allow', () => {
  test(`preview at ${CONTACTS.toLocaleString('en')} contacts with the exact count and sample`, async (t) => {
    const id = await company();
    // Contacts and one sent message each, written set-based (the API path is tested elsewhere).
    await sql`INSERT INTO contacts (company_id, phone, sha256_plus, sha256_bare, first_name, variables, tags, country)
      SELECT ${id}::int, '+49151' || lpad(g::text, 8, '0'), sha256(convert_to('+49151' || lpad(g::text, 8, '0'), 'UTF8')),
        sha256(convert_to('49151' || lpad(g::text, 8, '0'), 'UTF8')), 'Name' || g,
        jsonb_build_object('score', (g % 1000)::text, 'joined', '2026-01-' || lpad((1 + g % 28)::text, 2, '0'), 'city', 'Berlin'),
        CASE WHEN g % ${VIP_EVERY}::int = 0 THEN ARRAY['vip'] ELSE ARRAY[]::text[] END, 'DE'
      FROM generate_series(1, ${CONTACTS}::int) g`.execute(db());
    const camp = await s.admin('POST', `/admin/companies/${id}/campaigns`, { name: 'C', template: { body: 'Hi' } }, 201);
    const batch = crypto.randomUUID();
    await sql`INSERT INTO batches (batch_id, company_id, kind, source_id, total, items, template, status, completed_at)
      VALUES (${batch}::uuid, ${id}::int, 'campaign', ${camp.campaign_id}::int, ${CONTACTS}::int, '[]', '{}', 'completed', now())`.execute(db());
    await sql`INSERT INTO messages (message_id, batch_id, company_id, seq, contact_id, phone, status, sent_at)
      SELECT gen_random_uuid(), ${batch}::uuid, ${id}::int, g, c.contact_id, c.phone, 'sent', ${new Date(clock.now() - 86_400_000)}::timestamptz
      FROM contacts c, LATERAL (SELECT c.contact_id::int AS g) x WHERE c.company_id = ${id}::int`.execute(db());
    const segment = (await s.admin('POST', `/admin/companies/${id}/segments`, { name: 'Static' }, 201)).segment_id;
    const vips = (await sql<{ phone: string }>`SELECT phone FROM contacts WHERE company_id = ${id}::int AND 'vip' = ANY(tags) ORDER BY contact_id`.execute(db())).rows.map((r) => r.phone);
    assert.equal(vips.length, Math.floor(CONTACTS / VIP_EVERY));

    // The costliest filters take several steps of a scan at this company.
    assert.ok(CONTACTS > 2 * scanChunk(MAX_FILTER_COST), 'several steps');
    for (const [name, filter] of Object.entries(widestFilters({ segmentId: segment, campaignId: camp.campaign_id }))) {
      // As built: every condition matches nobody, so every one is evaluated for every contact.
      const started = performance.now();
      assert.deepEqual(await preview(id, filter), { count: 0, sample: [] }, name);
      const ms = performance.now() - started;
      // The same work with one condition that matches every VIP_EVERY-th contact: the count and the
      // sample are exact across the scan's steps.
      const parts = (filter as { any: unknown[] }).any;
      const withVip = { any: [...parts.slice(0, -1), { tag: 'vip' }] };
      if (parts.length > 1) {
        const got = await preview(id, withVip);
        assert.equal(got.count, vips.length, name);
        assert.deepEqual(got.sample.map((c: { phone: string }) => c.phone), vips.slice(0, 10), name);
      }
      t.diagnostic(`${name}: ${parts.length} conditions, preview of ${CONTACTS} contacts in ${Math.round(ms)} ms (${s.kind})`);
    }
  });
});

describe('over the limits: 422 naming the place and the limit', () => {
  test('the work budget', async () => {
    const id = await company();
    const heavy = (i: number) => ({ attribute: 'joined', op: 'gt', value: `2026-01-0${i + 1}` });
    const within = Math.floor(MAX_FILTER_COST / COST.time);
    assert.deepEqual(await preview(id, { any: Array.from({ length: within }, (_, i) => heavy(i)) }), { count: 0, sample: [] });
    const over = Array.from({ length: within + 1 }, (_, i) => heavy(i));
    const { loc, msg } = await refused(id, { any: over });
    assert.deepEqual(loc, ['any', within]);
    assert.match(msg, new RegExp(`at most ${MAX_FILTER_COST}`));
    // Nested, after a plain condition: the place is the condition that goes over.
    const nested = await refused(id, { all: [{ tag: 'a' }, { not: { any: over } }] });
    const overAt = over.findIndex((_, i) => COST.plain + (i + 1) * COST.time > MAX_FILTER_COST);
    assert.deepEqual(nested.loc, ['all', 1, 'not', 'any', overAt]);
    // Nothing is stored: a segment with the filter is refused too.
    await s.admin('POST', `/admin/companies/${id}/segments`, { name: 'Heavy', filter: { any: over } }, 422);
    assert.deepEqual((await s.admin('GET', `/admin/companies/${id}/segments`)).segments, []);
  });

  test('the values of all in / not_in lists together', async () => {
    const id = await company();
    const list = (i: number) => ({ field: 'first_name', op: i % 2 ? 'in' : 'not_in', value: Array.from({ length: MAX_LIST }, (_, k) => `n${i}-${k}`) });
    const lists = MAX_LIST_TOTAL / MAX_LIST;
    assert.equal((await preview(id, { all: Array.from({ length: lists }, (_, i) => list(i)) })).count, 0);
    const { loc, msg } = await refused(id, { all: Array.from({ length: lists + 1 }, (_, i) => list(i)) });
    assert.deepEqual(loc, ['all', lists, 'value']);
    assert.match(msg, new RegExp(`more than ${MAX_LIST_TOTAL} values`));
  });

  test('durations and relative times: at most 100 years, else 422 (never a 500)', async () => {
    const id = await company();
    const max = `${MAX_DURATION_DAYS}d`;
    for (const filter of [{ field: 'created_at', op: 'gt', value: `-${max}` }, { message: 'sent', within: max }, { replied_within: max },
      { attribute: 'joined', op: 'lt', value: `-${MAX_DURATION_DAYS * 24}h` }]) {
      assert.equal((await preview(id, filter)).count, 0, JSON.stringify(filter));
    }
    const cases: [unknown, unknown[]][] = [
      [{ field: 'created_at', op: 'gt', value: '-999999d' }, ['value']],
      [{ field: 'created_at', op: 'gt', value: `-${MAX_DURATION_DAYS + 1}d` }, ['value']],
      [{ message: 'sent', within: '999999d' }, ['within']],
      [{ message: 'sent', within: `${MAX_DURATION_DAYS * 24 * 60 + 1}m` }, ['within']],
      [{ replied_within: '999999d' }, ['replied_within']],
      [{ all: [{ tag: 'a' }, { attribute: 'joined', op: 'gte', value: '-99999999h' }] }, ['all', 1, 'value']],
    ];
    for (const [filter, at] of cases) {
      const { loc, msg } = await refused(id, filter);
      assert.deepEqual(loc, at, JSON.stringify(filter));
      assert.match(msg, new RegExp(String(MAX_DURATION_DAYS)), JSON.stringify(filter));
    }
  });
});

describe('references to another company', () => {
  test("a message condition naming another company's campaign or automation is refused", async () => {
    const id = await company();
    const other = await company();
    const mine = await s.admin('POST', `/admin/companies/${id}/campaigns`, { name: 'Mine', template: { body: 'Hi' } }, 201);
    const theirs = await s.admin('POST', `/admin/companies/${other}/campaigns`, { name: 'Theirs', template: { body: 'Hi' } }, 201);
    const myAuto = await s.admin('POST', `/admin/companies/${id}/automations`, { name: 'Mine', type: 'api', active: true, template: { body: 'Hi' } }, 201);
    const theirAuto = await s.admin('POST', `/admin/companies/${other}/automations`, { name: 'Theirs', type: 'api', active: true, template: { body: 'Hi' } }, 201);
    assert.equal((await preview(id, { message: 'sent', within: '30d', campaign_id: mine.campaign_id })).count, 0);
    assert.equal((await preview(id, { message: 'sent', within: '30d', automation_id: myAuto.automation_id })).count, 0);
    const c = await refused(id, { any: [{ tag: 'x' }, { message: 'sent', within: '30d', campaign_id: theirs.campaign_id }] });
    assert.deepEqual(c.loc, ['any', 1, 'campaign_id']);
    assert.equal(c.msg, `campaign_id ${theirs.campaign_id} is not a campaign of this company`);
    const a = await refused(id, { not: { message: 'read', within: '1d', automation_id: theirAuto.automation_id } });
    assert.deepEqual(a.loc, ['not', 'automation_id']);
    assert.equal(a.msg, `automation_id ${theirAuto.automation_id} is not an automation of this company`);
    // An id that names nothing at all is refused the same way.
    assert.deepEqual((await refused(id, { message: 'sent', within: '1d', campaign_id: 2_000_000_000 })).loc, ['campaign_id']);
    // Not stored either.
    await s.admin('POST', `/admin/companies/${id}/segments`, { name: 'Spy', filter: { message: 'sent', within: '30d', campaign_id: theirs.campaign_id } }, 422);
    assert.deepEqual((await s.admin('GET', `/admin/companies/${id}/segments`)).segments, []);
  });
});
