/**
 * The audience in the console over HTTP (forms as a browser without script sends them): the segment
 * builder (add and remove rows, preview, save a dynamic segment, edit its conditions), its refusals (a
 * problem of the filter beside its row with 422 and nothing written, never a 500), the preview
 * fragment the page's script asks for, another company's segment 404, a developer's 403; tags on the
 * contact page (add several, remove one, limits), the contacts list filtered by tag, the facts on the
 * contact page, the contacts export's tags and facts.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ADMIN_TOKEN, startTestServer, type TestServer } from '../helpers/server.ts';
import { csrfToken, newCompany, signedInClient, type Answer, type ConsoleClient } from './helpers.ts';
import { COST, MAX_FILTER_COST } from '../../src/domain/segment-filter.ts';

let s: TestServer;
before(async () => { s = await startTestServer(); });
after(() => s.close());

const run = String(Math.floor(Math.random() * 1000)).padStart(3, '0');
let seq = 0;
const phone = () => `+49157${run}${String(++seq).padStart(5, '0')}`;

/** A company with five contacts: three in Berlin (two tagged vip), one read message to the first. */
async function audience(): Promise<{ companyId: number; phones: string[] }> {
  const companyId = await newCompany(s, { default_country: 'DE' });
  const phones = Array.from({ length: 5 }, phone);
  await s.admin('PUT', `/admin/companies/${companyId}/contacts`, {
    contacts: phones.map((p, i) => ({ phone: p, first_name: ['Ada', 'Grace', 'Linus', 'Ken', 'Radia'][i], variables: { city: i < 3 ? 'Berlin' : 'Köln', orders: i * 3 }, tags: i < 2 ? ['vip'] : [] })),
  });
  const db = s.service.deps.database.db;
  const batchId = crypto.randomUUID();
  await db.insertInto('batches').values({ batch_id: batchId, company_id: companyId, kind: 'campaign', source_id: 1, status: 'completed', total: 1, items: '[]', template: '{}', completed_at: new Date() }).execute();
  const at = new Date(Date.now() - 2 * 86_400_000);
  await db.insertInto('messages').values({ message_id: crypto.randomUUID(), batch_id: batchId, company_id: companyId, seq: 0, phone: phones[0], status: 'read', attempts: 1, sent_at: at, delivered_at: at, read_at: at }).execute();
  return { companyId, phones };
}

/** The builder's fields for rows `[what, name, op, value, segment?, not?]`. */
function rowsForm(rows: [string, string, string, string, string?, boolean?][], extra: Record<string, string> = {}): Record<string, string> {
  const form: Record<string, string> = { match: 'all', ...extra };
  rows.forEach(([what, name, op, value, segment, not], i) => {
    Object.assign(form, { [`what_${i}`]: what, [`name_${i}`]: name, [`op_${i}`]: op, [`value_${i}`]: value, [`segment_${i}`]: segment ?? '' });
    if (not) form[`not_${i}`] = 'on';
  });
  return form;
}

const countOf = (page: Answer) => /data-preview-status data-count="(\d*)"/.exec(page.text)?.[1];
const rowCount = (page: Answer) => (page.text.split('<template')[0].match(/<fieldset class="condition" data-row>/g) ?? []).length;
const rowError = (page: Answer) => /<small id="row_(\d+)-error" class="error" role="alert" data-row-error>([^<]*)</.exec(page.text);

async function post(cl: ConsoleClient, path: string, form: Record<string, string>, pagePath = '/console/segments/new'): Promise<Answer> {
  const token = csrfToken((await cl.get(pagePath)).text);
  return cl.request('POST', path, { _csrf: token, ...form });
}

describe('the segment builder', () => {
  test('without script: add and remove rows, preview, save; the segment lists its conditions and members; edit them', async () => {
    const { companyId, phones } = await audience();
    const cl = await signedInClient(s, companyId, 'marketer');
    const empty = await cl.get('/console/segments/new');
    assert.equal(empty.status, 200);
    assert.equal(rowCount(empty), 1);
    assert.match(empty.text, /<script src="\/console\/assets\/segment-builder\.js" defer>/);
    assert.match(empty.text, /Complete a condition to see how many contacts match/);
    assert.doesNotMatch(empty.text, /<script>/, 'no inline script');

    const three: [string, string, string, string][] = [['attribute', 'city', 'eq', 'Berlin'], ['tag', '', 'eq', 'vip'], ['message:read', '', 'eq', '30d']];
    const added = await post(cl, '/console/segments/new', { ...rowsForm(three.slice(0, 1), { name: 'Berlin VIP readers' }), action: 'add' });
    assert.equal(added.status, 200);
    assert.equal(rowCount(added), 2);
    assert.match(added.text, /value="Berlin"/, 'the first row is kept');
    assert.match(added.text, /value="Berlin VIP readers"/, 'the name is kept');

    const removed = await post(cl, '/console/segments/new', { ...rowsForm([three[0], three[1], three[2]]), action: 'remove:1' });
    assert.equal(rowCount(removed), 2);
    assert.doesNotMatch(removed.text.split('<template')[0], /value="vip"/);

    const one = await post(cl, '/console/segments/new', { ...rowsForm(three.slice(0, 1)), action: 'preview' });
    assert.equal(one.status, 200);
    assert.equal(countOf(one), '3');
    assert.match(one.text, /3 contacts match now/);
    const preview = await post(cl, '/console/segments/new', { ...rowsForm(three), action: 'preview' });
    assert.equal(countOf(preview), '1');
    assert.ok(preview.text.includes(`/console/contacts/${encodeURIComponent(phones[0])}`), 'the sample links the contact');
    const anyOf = await post(cl, '/console/segments/new', { ...rowsForm(three), match: 'any', action: 'preview' });
    assert.equal(countOf(anyOf), '3');
    const negated = await post(cl, '/console/segments/new', { ...rowsForm([three[0], ['tag', '', 'eq', 'vip', '', true]]), action: 'preview' });
    assert.equal(countOf(negated), '1', 'Berlin without vip');

    const noName = await post(cl, '/console/segments/new', { ...rowsForm(three), action: 'save' });
    assert.equal(noName.status, 422);
    assert.match(noName.text, /id="seg-name-error"[^>]*>Enter a name\./);
    const saved = await post(cl, '/console/segments/new', { ...rowsForm(three), name: ' Berlin VIP readers ', action: 'save' });
    assert.equal(saved.status, 303, saved.text.slice(0, 500));
    const segmentId = Number(/^\/console\/segments\/(\d+)\?done=created_dynamic$/.exec(saved.location ?? '')?.[1]);
    const seg = await s.admin('GET', `/admin/segments/${segmentId}`);
    assert.deepEqual([seg.name, seg.kind, seg.members_total], ['Berlin VIP readers', 'dynamic', 1]);
    assert.deepEqual(seg.filter, { all: [{ attribute: 'city', op: 'eq', value: 'Berlin' }, { tag: 'vip' }, { message: 'read', within: '30d' }] });

    const list = await cl.get('/console/segments');
    assert.match(list.text, new RegExp(`data-segment-id="${segmentId}" data-kind="dynamic"`));
    const page = await cl.get(saved.location!);
    assert.match(page.text, /Dynamic segment created/);
    assert.match(page.text, /Variable city is &quot;Berlin&quot;/);
    assert.match(page.text, /Has the tag &quot;vip&quot;/);
    assert.match(page.text, /Message read within 30d/);
    assert.ok(page.text.includes(`>${phones[0]}</a>`), 'the member is listed');
    assert.doesNotMatch(page.text, /Add or remove members/, 'no members form on a dynamic segment');
    assert.match(page.text, new RegExp(`href="/console/segments/${segmentId}/filter"`));

    const campaign = await s.admin('POST', `/admin/companies/${companyId}/campaigns`, { name: 'Spring', template: { body: 'Hi' } }, 201);
    assert.match((await cl.get(`/console/campaigns/${campaign.campaign_id}/send`)).text, /Berlin VIP readers \(1 members now, dynamic\)<\/option>/, 'the send form counts the matching contacts');

    const edit = await cl.get(`/console/segments/${segmentId}/filter`);
    assert.equal(edit.status, 200);
    assert.equal(rowCount(edit), 3);
    assert.equal(countOf(edit), '1');
    const filterPath = `/console/segments/${segmentId}/filter`;
    const changed = await post(cl, filterPath, { ...rowsForm([['attribute', 'orders', 'gte', '3']]), action: 'save' }, filterPath);
    assert.equal(changed.status, 303);
    assert.deepEqual((await s.admin('GET', `/admin/segments/${segmentId}`)).filter, { all: [{ attribute: 'orders', op: 'gte', value: 3 }] });
    assert.equal((await s.admin('GET', `/admin/segments/${segmentId}`)).members_total, 4, 'numbers compare as numbers');
    const { entries } = await s.admin('GET', `/admin/audit?company_id=${companyId}&limit=20`);
    assert.deepEqual(entries.filter((e: { action: string }) => e.action.startsWith('segment.')).map((e: { action: string; actor: string }) => `${e.actor.split(':')[0]} ${e.action}`).reverse(), ['console segment.create', 'console segment.filter']);
  });

  test('a bad filter is shown beside its row (422), nothing is written, never a 500', async () => {
    const { companyId } = await audience();
    const other = await newCompany(s);
    const foreign = await s.admin('POST', `/admin/companies/${other}/segments`, { name: 'Theirs' }, 201);
    const cl = await signedInClient(s, companyId);
    const cases: [string, [string, string, string, string, string?][], RegExp][] = [
      ['a time that is no time', [['field:last_read_at', '', 'gt', 'yesterday']], /needs a time/i],
      ['a duration without unit', [['tag', '', 'eq', 'vip'], ['message:sent', '', 'eq', '30']], /bad duration/i],
      ['no value', [['attribute', 'city', 'eq', '']], /Enter a value/],
      ['no variable name', [['attribute', '', 'eq', 'x']], /Enter the name of the variable/],
      ['a comparison the field does not take', [['field:created_at', '', 'contains', '2026']], /Choose a comparison/],
      ['an unknown kind', [['drop table', '', 'eq', 'x']], /Choose what this condition tests/],
      ['another company\'s segment', [['segment', '', 'eq', '', String(foreign.segment_id)]], new RegExp(`segment ${foreign.segment_id} is not a static segment of this company`, 'i')],
      ['a variable name too long', [['attribute', 'x'.repeat(65), 'eq', '1']], /an attribute name must have 1 to 64 characters/i],
    ];
    for (const [what, rows, message] of cases) {
      for (const action of ['preview', 'save']) {
        const r = await post(cl, '/console/segments/new', { ...rowsForm(rows), name: 'Bad', action });
        assert.equal(r.status, 422, `${what} (${action}): ${r.status}`);
        const err = rowError(r);
        assert.ok(err, `${what} (${action}): an error beside the row`);
        assert.equal(Number(err![1]), rows.length - 1, `${what}: beside the row it comes from`);
        assert.match(err![2].replace(/&quot;/g, '"'), message, what);
      }
    }
    // Nonsense the form itself cannot send: still a page, never a 500.
    const nonsense: Record<string, string>[] = [{ what_0: 'tag', value_0: 'x'.repeat(70), action: 'preview' }, { what_999: 'tag', value_999: 'a', action: 'remove:abc' }, { action: 'save', name: 'x', what_0: 'segment', segment_0: '99999999999' }];
    for (const form of nonsense) {
      const r = await post(cl, '/console/segments/new', form);
      assert.ok(r.status === 200 || r.status === 422, `${JSON.stringify(form)}: ${r.status}`);
    }
    assert.deepEqual((await s.admin('GET', `/admin/companies/${companyId}/segments`)).segments, [], 'nothing was created');
  });

  test('the preview fragment for the page\'s script; the 21st segment; another company\'s segment 404; static 409; developer 403', async () => {
    const { companyId } = await audience();
    const cl = await signedInClient(s, companyId);
    const ok = await post(cl, '/console/segments/preview', rowsForm([['attribute', 'city', 'eq', 'Berlin']]));
    assert.equal(ok.status, 200);
    assert.match(ok.headers.get('content-type') ?? '', /^text\/html/);
    assert.match(ok.text, /^<p data-preview-count data-count="3">3 contacts match now.<\/p><div data-preview-sample>/);
    const bad = await post(cl, '/console/segments/preview', rowsForm([['field:created_at', '', 'gt', 'soon']]));
    assert.equal(bad.status, 422);
    assert.match(bad.text, /^<p data-preview-count data-count="">Not counted: condition 1: /);
    // Over the filter language's work budget (three variables compared with a date, where two fit): beside the row that goes over.
    const costly = await post(cl, '/console/segments/new', { ...rowsForm([1, 2, 3].map((d) => ['attribute', 'joined', 'gt', `2026-01-0${d}`] as [string, string, string, string])), action: 'preview' });
    assert.equal(costly.status, 422);
    assert.equal(rowError(costly)?.[1], '2');
    assert.match(rowError(costly)?.[2] ?? '', new RegExp(`costs too much to evaluate: ${3 * COST.time} units with this condition, at most ${MAX_FILTER_COST}`));
    const noToken = await cl.request('POST', '/console/segments/preview', rowsForm([['tag', '', 'eq', 'vip']]));
    assert.equal(noToken.status, 403);

    const other = await newCompany(s);
    const theirs = await s.admin('POST', `/admin/companies/${other}/segments`, { name: 'Theirs', filter: { tag: 'vip' } }, 201);
    const mineStatic = await s.admin('POST', `/admin/companies/${companyId}/segments`, { name: 'Static' }, 201);
    const nested = await s.admin('POST', `/admin/companies/${companyId}/segments`, { name: 'Nested', filter: { any: [{ all: [{ tag: 'vip' }, { tag: 'b' }] }, { tag: 'c' }] } }, 201);
    assert.equal((await cl.get(`/console/segments/${theirs.segment_id}/filter`)).status, 404);
    assert.equal((await cl.get(`/console/segments/${theirs.segment_id}`)).status, 404);
    const postTheirs = await post(cl, `/console/segments/${theirs.segment_id}/filter`, { ...rowsForm([['tag', '', 'eq', 'x']]), action: 'save' });
    assert.equal(postTheirs.status, 404);
    assert.deepEqual((await s.admin('GET', `/admin/segments/${theirs.segment_id}`)).filter, { tag: 'vip' }, 'unchanged');
    assert.equal((await cl.get(`/console/segments/${mineStatic.segment_id}/filter`)).status, 409);
    assert.equal((await cl.get(`/console/segments/${nested.segment_id}/filter`)).status, 409);
    const nestedPage = await cl.get(`/console/segments/${nested.segment_id}`);
    assert.match(nestedPage.text, /Any of these is true:<ul><li>All of these are true:/);
    assert.match(nestedPage.text, /change them with the operator API/);

    for (let i = 0; i < 18; i++) await s.admin('POST', `/admin/companies/${companyId}/segments`, { name: `S${i}` }, 201);
    const full = await post(cl, '/console/segments/new', { ...rowsForm([['tag', '', 'eq', 'vip']]), name: 'One too many', action: 'save' });
    assert.equal(full.status, 422);
    assert.match(full.text, /Segment limit reached/);

    const dev = await signedInClient(s, companyId, 'developer');
    const devPage = await dev.get('/console/segments/new');
    assert.equal(devPage.status, 200);
    assert.match(devPage.text, /data-read-only/);
    assert.doesNotMatch(devPage.text, /data-segment-builder/);
    const refused = await post(dev, '/console/segments/new', { ...rowsForm([['tag', '', 'eq', 'vip']]), name: 'Dev', action: 'save' });
    assert.equal(refused.status, 403);
  });
});

describe('tags and facts', () => {
  test('the contact page adds and removes tags, shows the facts; the list filters by tag; the export has tags and facts', async () => {
    const { companyId, phones } = await audience();
    const cl = await signedInClient(s, companyId, 'marketer');
    const pagePath = `/console/contacts/${encodeURIComponent(phones[2])}`;
    const page = await cl.get(pagePath);
    assert.match(page.text, /<dd data-tags>—<\/dd>/);
    assert.match(page.text, /<dd data-country>DE<\/dd>/);
    const first = await cl.get(`/console/contacts/${encodeURIComponent(phones[0])}`);
    assert.match(first.text, /<dd data-last-read-at><time/);
    assert.match(first.text, /<dd data-last-sent-at><time/);

    const added = await cl.submit(pagePath, `${pagePath}/tags`, { add: ' spring sale , vip,vip ' });
    assert.equal(added.status, 303);
    assert.deepEqual((await s.admin('GET', `/admin/companies/${companyId}/contacts/${encodeURIComponent(phones[2])}`)).tags, ['spring sale', 'vip']);
    const shown = await cl.get(added.location!);
    assert.match(shown.text, /Tags saved\./);
    assert.match(shown.text, /Remove<span class="visually-hidden"> tag spring sale<\/span>/);
    assert.match(shown.text, /tags added: spring sale, vip/, 'the history says what changed');

    const tooLong = await cl.submit(pagePath, `${pagePath}/tags`, { add: 'ok, ' + 'x'.repeat(65) });
    assert.equal(tooLong.status, 422);
    assert.match(tooLong.text, /id="tags-error"[^>]*>A tag has at most 64 characters/);
    assert.match(tooLong.text, /value="ok, x{65}"/, 'the input is kept');
    const many = await cl.submit(pagePath, `${pagePath}/tags`, { add: Array.from({ length: 99 }, (_, i) => `t${i}`).join(',') });
    assert.equal(many.status, 422);
    assert.match(many.text, /at most 100 tags/);
    assert.equal((await cl.submit(pagePath, `${pagePath}/tags`, { add: ' , ' })).status, 422);

    const removed = await cl.submit(pagePath, `${pagePath}/tags`, { remove: 'vip' });
    assert.equal(removed.status, 303);
    assert.deepEqual((await s.admin('GET', `/admin/companies/${companyId}/contacts/${encodeURIComponent(phones[2])}`)).tags, ['spring sale']);

    const dev = await signedInClient(s, companyId, 'developer');
    assert.doesNotMatch((await dev.get(pagePath)).text, /data-tags-form/);
    assert.equal((await dev.submit(pagePath, `${pagePath}/tags`, { add: 'x' })).status, 403);

    const vip = await cl.get('/console/contacts?tag=vip');
    assert.equal(vip.status, 200);
    const listed = (text: string) => phones.filter((p) => text.includes(`>${p}</a>`));
    assert.deepEqual(listed(vip.text), phones.slice(0, 2));
    assert.match(vip.text, /<option value="vip"><\/option>/, 'the field suggests the tags');
    assert.deepEqual(listed((await cl.get('/console/contacts?tag=vip&q=grace')).text), [phones[1]]);
    assert.deepEqual(listed((await cl.get(`/console/contacts?tag=vip&q=${encodeURIComponent(phones[0])}`)).text), [phones[0]], 'a full number with a tag lists, not redirects');
    assert.deepEqual(listed((await cl.get('/console/contacts?tag=nobody')).text), []);
    assert.deepEqual(listed((await cl.get(`/console/contacts?tag=${encodeURIComponent('spring sale')}`)).text), [phones[2]]);

    const csv = await (await fetch(`${s.url}/console/contacts/export.csv`, { headers: { cookie: [...cl.cookies].map(([k, v]) => `${k}=${v}`).join('; ') } })).text();
    const [header, ...lines] = csv.trim().split('\n');
    assert.equal(header, 'phone,first_name,last_name,opted_out,opt_out_source,opt_out_at,tags,phone_country,last_inbound_at,last_sent_at,last_delivered_at,last_read_at,city,orders');
    const row = lines.find((l) => l.startsWith(phones[0]))!.split(',');
    assert.deepEqual([row[6], row[7]], ['vip', 'DE']);
    assert.match(row[9], /^\d{4}-\d\d-\d\dT/);
    assert.equal(row[11], row[9], 'read when sent (the test message)');
    const api = await (await fetch(`${s.url}/admin/companies/${companyId}/contacts/export`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).text();
    assert.equal(api, csv, 'the operator API exports the same');
  });
});
