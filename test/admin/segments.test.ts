/**
 * Operator API segment routes (src/http/admin/segments.ts), against the real server:
 *
 * - happy: create, list, rename, members added / removed by numbers and by digests (4.2's matching,
 *   invalid items set apart with positions), members paged by keyset, delete (frees a slot), audit;
 *   a scheduled campaign send to a segment that is then deleted still goes to its members (FakeClock);
 * - errors: 4.1's name rule and the limit of 20 (400 with 4.1's text, nothing created), bad bodies and
 *   queries 422 in the admin list shape, nothing changed;
 * - security: another company's segment is never touched through the company-scoped route, unknown
 *   segment ids 404, no token 401;
 * - the document: every route documented with every status, an operationId, examples that validate,
 *   and the real answers validate against the documented schemas.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { ADMIN_TOKEN, eventually, FakeClock, startTestServer, type TestServer } from '../helpers/server.ts';

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => void;
const DOC_ID = 'https://cms.invalid/openapi.json';
const OPERATIONS: [method: string, path: string, statuses: number[]][] = [
  ['get', '/admin/companies/{company_id}/segments', [200, 401, 404, 422]],
  ['post', '/admin/companies/{company_id}/segments', [201, 400, 401, 404, 422]],
  ['patch', '/admin/segments/{segment_id}', [200, 401, 404, 422]],
  ['delete', '/admin/segments/{segment_id}', [200, 401, 404, 422]],
  ['post', '/admin/segments/{segment_id}/members', [200, 401, 404, 413, 422]],
  ['get', '/admin/segments/{segment_id}/members', [200, 401, 404, 422]],
];

const clock = new FakeClock(Date.parse('2026-06-01T10:00:00Z'));
let s: TestServer;
let doc: any;
let ajv: Ajv2020;
before(async () => {
  s = await startTestServer({ clock });
  doc = await (await fetch(`${s.url}/openapi.json`)).json();
  ajv = new Ajv2020({ strict: false, allErrors: true, validateSchema: false });
  addFormats(ajv);
  ajv.addSchema({ ...doc, $id: DOC_ID });
});
after(() => s.close());

const pointer = (...parts: (string | number)[]) => parts.map((p) => String(p).replace(/~/g, '~0').replace(/\//g, '~1')).join('/');
function problems(value: unknown, ...parts: (string | number)[]): string[] {
  const validate = ajv.getSchema(`${DOC_ID}#/${pointer(...parts)}`);
  assert.ok(validate, `no schema at ${parts.join(' ')}`);
  return validate(value) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath} ${e.message}`);
}

/** Calls a route; checks the answer's status is documented and its body validates against that status's schema. */
async function call(method: string, template: string, path: string, body?: unknown, token: string | null = ADMIN_TOKEN): Promise<{ status: number; body: any }> {
  const headers: Record<string, string> = {};
  if (token !== null) headers.authorization = `Bearer ${token}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(s.url + path, { method: method.toUpperCase(), headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  const json = text ? JSON.parse(text) : undefined;
  const answer = doc.paths[template]?.[method]?.responses?.[String(res.status)];
  assert.ok(answer, `${method} ${path}: status ${res.status} is documented (${text})`);
  assert.deepEqual(problems(json, 'paths', template, method, 'responses', res.status, 'content', 'application/json', 'schema'), [], `${method} ${path} ${res.status}: ${text}`);
  return { status: res.status, body: json };
}

const sha = (text: string) => createHash('sha256').update(text).digest('hex');
const seg = (id: number, rest = '') => [`/admin/segments/{segment_id}${rest}`, `/admin/segments/${id}${rest}`] as const;

async function company(fields: Record<string, unknown> = {}): Promise<number> {
  return (await s.admin('POST', '/admin/companies', { name: 'Seg Co', subscription_active: true, ...fields }, 201)).company_id;
}

async function memberPhones(segmentId: number): Promise<string[]> {
  const rows = await s.service.deps.database.db.selectFrom('segment_members as m').innerJoin('contacts as c', 'c.contact_id', 'm.contact_id')
    .select('c.phone').where('m.segment_id', '=', segmentId).orderBy('c.phone').execute();
  return rows.map((r) => r.phone);
}

describe('the document', () => {
  test('every segment route: operationId, tags, summary, every status with a body schema, examples that validate', () => {
    for (const [method, path, statuses] of OPERATIONS) {
      const op = doc.paths[path]?.[method];
      assert.ok(op, `${method} ${path} is documented`);
      assert.match(op.operationId ?? '', /^[a-z][a-z_]+$/);
      assert.ok(op.tags?.includes('operator: segments') && op.summary, `${method} ${path} tags and summary`);
      for (const status of statuses) assert.ok(op.responses[String(status)], `${method} ${path} documents ${status}`);
      for (const status of statuses) {
        const media = op.responses[String(status)].content?.['application/json'];
        assert.ok(media?.schema && media.example !== undefined, `${method} ${path} ${status} schema and example`);
        assert.deepEqual(problems(media.example, 'paths', path, method, 'responses', status, 'content', 'application/json', 'schema'), [], `${method} ${path} ${status} example`);
      }
      const body = op.requestBody?.content?.['application/json'];
      if (body) {
        const examples = body.example !== undefined ? [body.example] : Object.values<any>(body.examples ?? {}).map((e) => e.value);
        assert.ok(examples.length, `${method} ${path} request example`);
        for (const e of examples) assert.deepEqual(problems(e, 'paths', path, method, 'requestBody', 'content', 'application/json', 'schema'), [], `${method} ${path} request example`);
      }
    }
    const titles = Object.values<any>(doc.components.schemas).map((c) => c.title);
    for (const name of ['Segment', 'SegmentMembersChange', 'SegmentMember', 'SegmentMembersPage']) assert.ok(titles.includes(name), `component ${name}`);
  });
});

describe('happy paths', () => {
  test('create, list, rename, members by numbers and digests, paged members, delete; every change audit-logged', async () => {
    const id = await company({ default_country: 'DE' });
    await s.admin('PUT', `/admin/companies/${id}/contacts`, { contacts: ['+4915112340001', '+4915112340002', '+4915112340003', '+4915112340004'].map((phone) => ({ phone, first_name: 'P' })) });
    const created = await call('post', '/admin/companies/{company_id}/segments', `/admin/companies/${id}/segments`, { name: 'Newsletter' });
    assert.equal(created.status, 201);
    assert.deepEqual({ ...created.body, segment_id: 0, created_at: '' }, { segment_id: 0, company_id: id, name: 'Newsletter', kind: 'static', filter: null, members: 0, created_at: '' });
    const segmentId = created.body.segment_id;

    const added = await call('post', ...seg(segmentId, '/members'), { mode: 'add', contacts: ['+4915112340001', '015112340002', '0151 1234 0002', 'call me', '+4915199999999', 'call me', 'x'.repeat(65)] });
    assert.equal(added.status, 200);
    assert.deepEqual(added.body, {
      segment_id: segmentId, mode: 'add', contacts_provided: 5, contacts_processed: 2, contacts_unchanged: 0, contacts_not_found: 1, contacts_invalid: 2,
      invalid: [{ position: 4, value: 'call me' }, { position: 7, value: 'x'.repeat(65) }],
    });
    const hashed = await call('post', ...seg(segmentId, '/members'), { mode: 'add', use_hashed_phone: true, contacts: [sha('+4915112340001'), sha('4915112340003').toUpperCase(), sha('+4915100000000'), 'nope'] });
    assert.deepEqual([hashed.body.contacts_processed, hashed.body.contacts_unchanged, hashed.body.contacts_not_found, hashed.body.contacts_invalid], [1, 1, 1, 1]);
    assert.deepEqual(await memberPhones(segmentId), ['+4915112340001', '+4915112340002', '+4915112340003']);
    const removed = await call('post', ...seg(segmentId, '/members'), { mode: 'delete', contacts: ['+4915112340002', '+4915112340004'] });
    assert.deepEqual([removed.body.contacts_processed, removed.body.contacts_unchanged, removed.body.contacts_not_found], [1, 1, 0]);
    const both = await call('post', ...seg(segmentId, '/members'), { mode: 'add', use_hashed_phone: true, contacts: [sha('+4915112340004'), sha('4915112340004')] });
    assert.deepEqual([both.body.contacts_provided, both.body.contacts_processed, both.body.contacts_unchanged, both.body.contacts_not_found], [2, 1, 0, 0], 'one contact named by both digests');
    await call('post', ...seg(segmentId, '/members'), { mode: 'delete', contacts: ['+4915112340004'] });

    const renamed = await call('patch', ...seg(segmentId), { name: 'Weekly' });
    assert.equal(renamed.body.name, 'Weekly');
    assert.equal(renamed.body.members, 2);
    const list = await call('get', '/admin/companies/{company_id}/segments', `/admin/companies/${id}/segments`);
    assert.deepEqual(list.body.segments.map((x: any) => [x.segment_id, x.name, x.members]), [[segmentId, 'Weekly', 2]]);

    const first = await call('get', ...seg(segmentId, '/members'));
    assert.equal(first.body.members_total, 2);
    assert.deepEqual(first.body.members.map((m: any) => m.phone), ['+4915112340001', '+4915112340003']);
    assert.equal(first.body.next_after, null);
    const one = await call('get', seg(segmentId, '/members')[0], `/admin/segments/${segmentId}/members?limit=1`);
    assert.equal(one.body.members.length, 1);
    const next = await call('get', seg(segmentId, '/members')[0], `/admin/segments/${segmentId}/members?limit=1&after=${one.body.next_after}`);
    assert.deepEqual(next.body.members.map((m: any) => m.phone), ['+4915112340003']);
    assert.equal(next.body.next_after, null);

    const deleted = await call('delete', ...seg(segmentId));
    assert.deepEqual([deleted.body.segment_id, deleted.body.name, deleted.body.members], [segmentId, 'Weekly', 2]);
    assert.equal((await call('get', ...seg(segmentId, '/members'))).status, 404);
    const contacts = await s.service.deps.database.db.selectFrom('contacts').select('contact_id').where('company_id', '=', id).execute();
    assert.equal(contacts.length, 4, 'contacts stay');
    const { entries } = await s.admin('GET', `/admin/audit?company_id=${id}`);
    assert.deepEqual(entries.filter((e: any) => e.action.startsWith('segment.')).map((e: any) => [e.actor, e.action]).reverse(), [
      ['admin', 'segment.create'], ['admin', 'segment.members.add'], ['admin', 'segment.members.add'], ['admin', 'segment.members.remove'],
      ['admin', 'segment.members.add'], ['admin', 'segment.members.remove'], ['admin', 'segment.rename'], ['admin', 'segment.delete'],
    ]);
  });

  test('members pages walk a large segment in contact order, each member once', async () => {
    const id = await company();
    const phones = Array.from({ length: 230 }, (_, i) => `+49151400${String(i).padStart(5, '0')}`);
    await s.admin('PUT', `/admin/companies/${id}/contacts`, { contacts: phones.map((phone) => ({ phone })) });
    const segmentId = (await s.admin('POST', `/admin/companies/${id}/segments`, { name: 'All' }, 201)).segment_id;
    assert.equal((await s.admin('POST', `/admin/segments/${segmentId}/members`, { mode: 'add', contacts: phones })).contacts_processed, 230);
    const seen: string[] = [];
    let after: number | null = 0;
    let pages = 0;
    while (after !== null) {
      const page: any = await s.admin('GET', `/admin/segments/${segmentId}/members?after=${after}`);
      assert.ok(page.members.length <= 50);
      seen.push(...page.members.map((m: any) => m.phone));
      after = page.next_after;
      pages += 1;
    }
    assert.equal(pages, 5);
    assert.deepEqual(seen, phones);
  });

  test('a scheduled campaign send to a segment deleted afterwards still goes to the members it was made with', async () => {
    const id = await company();
    const phones = ['+4915112350001', '+4915112350002'];
    await s.admin('PUT', `/admin/companies/${id}/contacts`, { contacts: phones.map((phone) => ({ phone })) });
    const segmentId = (await s.admin('POST', `/admin/companies/${id}/segments`, { name: 'Sched' }, 201)).segment_id;
    await s.admin('POST', `/admin/segments/${segmentId}/members`, { mode: 'add', contacts: phones });
    const camp = await s.admin('POST', `/admin/companies/${id}/campaigns`, { name: 'Later', template: { body: 'Hi' } }, 201);
    const sent = await s.admin('POST', `/admin/campaigns/${camp.campaign_id}/sends`, { segment_id: segmentId, scheduled_for: '2026-06-01T12:00:00Z' }, 202);
    await eventually(async () => (await s.admin('GET', `/admin/batches/${sent.batch_id}/messages`)).messages.length === 2);
    await s.admin('DELETE', `/admin/segments/${segmentId}`);
    clock.set(Date.parse('2026-06-01T12:00:01Z'));
    await s.service.workers?.sweepNow();
    const done = await eventually(async () => {
      const b = await s.admin('GET', `/admin/batches/${sent.batch_id}`);
      return b.status === 'completed' ? b : undefined;
    });
    assert.equal(done.counts.sent, 2);
    assert.deepEqual((await s.admin('GET', `/admin/batches/${sent.batch_id}/messages`)).messages.map((m: any) => m.phone).sort(), phones);
    clock.set(Date.parse('2026-06-01T10:00:00Z'));
  });
});

describe('errors', () => {
  test('name rules of 4.1 and the limit of 20: 422 / 400, nothing created; deleting frees a slot', async () => {
    const id = await company();
    const path = `/admin/companies/${id}/segments`;
    const t = '/admin/companies/{company_id}/segments';
    for (const body of [{}, { name: '' }, { name: 'x'.repeat(256) }, { name: null }, null]) {
      const r = await call('post', t, path, body);
      assert.equal(r.status, 422, JSON.stringify(body));
      assert.ok(Array.isArray(r.body.detail));
    }
    assert.equal((await call('post', t, path, { name: '😀'.repeat(255) })).status, 201, '255 code points fit');
    for (let i = 2; i <= 20; i++) assert.equal((await call('post', t, path, { name: `S${i}` })).status, 201);
    const full = await call('post', t, path, { name: 'S21' });
    assert.deepEqual(full, { status: 400, body: { detail: 'Segment limit reached: a company can hold at most 20 segments' } });
    const list = (await call('get', t, path)).body.segments;
    assert.equal(list.length, 20);
    await call('delete', ...seg(list[0].segment_id));
    assert.equal((await call('post', t, path, { name: 'S21' })).status, 201);
  });

  test('bad member requests and bad queries are 422 and change nothing; unknown ids 404; no token 401', async () => {
    const id = await company();
    await s.admin('PUT', `/admin/companies/${id}/contacts`, { contacts: [{ phone: '+4915112360001' }] });
    const segmentId = (await s.admin('POST', `/admin/companies/${id}/segments`, { name: 'E' }, 201)).segment_id;
    for (const body of [{ mode: 'add', contacts: [] }, { mode: 'merge', contacts: ['+4915112360001'] }, { contacts: ['+4915112360001'] },
      { mode: 'add', contacts: { phone: '+4915112360001' } }, { mode: 'add', contacts: [{ phone: '+4915112360001' }] }, { mode: 'add', contacts: ['+4915112360001'], use_hashed_phone: 'yes' }]) {
      const r = await call('post', ...seg(segmentId, '/members'), body);
      assert.equal(r.status, 422, JSON.stringify(body));
    }
    const huge = await call('post', ...seg(segmentId, '/members'), { mode: 'add', contacts: ['+4915112360001', 'x'.repeat(17 * 1024 * 1024)] });
    assert.deepEqual(huge, { status: 413, body: { detail: 'Request body too large' } });
    assert.deepEqual(await memberPhones(segmentId), []);
    for (const q of ['limit=0', 'limit=1001', 'after=-1', 'after=x']) assert.equal((await call('get', seg(segmentId, '/members')[0], `/admin/segments/${segmentId}/members?${q}`)).status, 422, q);
    assert.equal((await call('patch', ...seg(segmentId), { name: '' })).status, 422);
    assert.equal((await call('patch', seg(segmentId)[0], '/admin/segments/abc', { name: 'x' })).status, 422);
    for (const [m, rest, body] of [['patch', '', { name: 'x' }], ['delete', '', undefined], ['post', '/members', { mode: 'add', contacts: ['+4915112360001'] }], ['get', '/members', undefined]] as const) {
      const r = await call(m, ...seg(2147483647, rest), body);
      assert.deepEqual(r, { status: 404, body: { detail: 'Segment not found' } }, `${m} ${rest}`);
    }
    assert.deepEqual(await call('get', '/admin/companies/{company_id}/segments', '/admin/companies/2147483647/segments'), { status: 404, body: { detail: 'Company not found' } });
    assert.deepEqual(await call('post', '/admin/companies/{company_id}/segments', '/admin/companies/2147483647/segments', { name: 'x' }), { status: 404, body: { detail: 'Company not found' } });
    assert.equal((await call('get', ...seg(segmentId, '/members'), undefined, null)).status, 401);
    assert.equal((await call('delete', ...seg(segmentId), undefined, 'wrong')).status, 401);
    assert.equal((await s.admin('GET', `/admin/segments/${segmentId}/members`)).members_total, 0, 'still there');
  });
});

describe('security', () => {
  test("a company's segment list never shows another's; members match only the segment's own company's contacts", async () => {
    const a = await company();
    const b = await company();
    await s.admin('PUT', `/admin/companies/${b}/contacts`, { contacts: [{ phone: '+4915112370001' }] });
    const segA = (await s.admin('POST', `/admin/companies/${a}/segments`, { name: 'A' }, 201)).segment_id;
    const segB = (await s.admin('POST', `/admin/companies/${b}/segments`, { name: 'B' }, 201)).segment_id;
    assert.deepEqual((await s.admin('GET', `/admin/companies/${a}/segments`)).segments.map((x: any) => x.segment_id), [segA]);
    // B's contact is not A's: adding it to A's segment finds nothing.
    const r = await s.admin('POST', `/admin/segments/${segA}/members`, { mode: 'add', contacts: ['+4915112370001', sha('+4915112370001')] });
    assert.deepEqual([r.contacts_processed, r.contacts_not_found, r.contacts_invalid], [0, 1, 1]);
    const h = await s.admin('POST', `/admin/segments/${segA}/members`, { mode: 'add', use_hashed_phone: true, contacts: [sha('+4915112370001')] });
    assert.deepEqual([h.contacts_processed, h.contacts_not_found], [0, 1]);
    assert.deepEqual(await memberPhones(segA), []);
    assert.equal((await s.admin('GET', `/admin/segments/${segB}/members`)).members_total, 0);
  });
});
