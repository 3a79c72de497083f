/**
 * Console pages over plain HTTP: what they list (segments with member counts, batches page by page,
 * messages found by phone) and that they show a company's settings but never a channel's secrets.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { insertBatch, newCompany, signedInClient } from './helpers.ts';

let s: TestServer;
before(async () => { s = await startTestServer({ role: 'api' }); });
after(() => s.close());

const rows = (text: string, attr: string) => [...text.matchAll(new RegExp(`<tr ${attr}="([^"]+)"`, 'g'))].map((m) => m[1]);

describe('console pages', () => {
  test('Segments lists every segment of the company with its member count', async () => {
    const companyId = await newCompany(s);
    const db = s.service.deps.database.db;
    await s.admin('PUT', `/admin/companies/${companyId}/contacts`, { contacts: [{ phone: '+4915112340001' }, { phone: '+4915112340002' }, { phone: '+4915112340003' }] });
    const contacts = await db.selectFrom('contacts').select('contact_id').where('company_id', '=', companyId).execute();
    const full = await db.insertInto('segments').values({ company_id: companyId, name: 'Everyone <b>' }).returning('segment_id').executeTakeFirstOrThrow();
    const empty = await db.insertInto('segments').values({ company_id: companyId, name: 'Nobody' }).returning('segment_id').executeTakeFirstOrThrow();
    await db.insertInto('segment_members').values(contacts.map((c) => ({ segment_id: full.segment_id, contact_id: c.contact_id }))).execute();
    const c = await signedInClient(s, companyId);
    const page = await c.get('/console/segments');
    assert.equal(page.status, 200);
    assert.deepEqual(rows(page.text, 'data-segment-id'), [String(full.segment_id), String(empty.segment_id)]);
    assert.match(page.text, /Everyone &lt;b&gt;<\/a>/, 'names are escaped');
    assert.match(page.text, /data-label="Members" class="num"><span class="cell">3</);
    assert.match(page.text, /data-label="Members" class="num"><span class="cell">0</);
    const one = await c.get(`/console/segments/${full.segment_id}`);
    assert.equal(one.status, 200);
    assert.match(one.text, /\+4915112340003/);
  });

  test('Sends pages through batches, newest first, 25 a page', async () => {
    const companyId = await newCompany(s);
    const ids: string[] = [];
    for (let i = 0; i < 27; i++) ids.push(await insertBatch(s, companyId, [{ phone: `+49151123450${String(i).padStart(2, '0')}`, status: 'sent' }]));
    const db = s.service.deps.database.db;
    for (const [i, id] of ids.entries()) await db.updateTable('batches').set({ created_at: new Date(Date.UTC(2030, 0, 1, 0, i)) }).where('batch_id', '=', id).execute();
    const c = await signedInClient(s, companyId);
    const first = await c.get('/console/sends');
    assert.deepEqual(rows(first.text, 'data-batch-id'), ids.slice(2).reverse());
    assert.match(first.text, /href="\/console\/sends\?page=2" rel="next"/);
    assert.doesNotMatch(first.text, /rel="prev"/);
    const second = await c.get('/console/sends?page=2');
    assert.deepEqual(rows(second.text, 'data-batch-id'), ids.slice(0, 2).reverse());
    assert.match(second.text, /rel="prev"/);
    assert.doesNotMatch(second.text, /rel="next"/);
    assert.equal((await c.get('/console/sends?page=abc')).status, 200);
  });

  test('phone search: the full number in any format, or 4+ digits of it; a batch page filters its messages', async () => {
    const companyId = await newCompany(s);
    const batch = await insertBatch(s, companyId, [
      { phone: '+4915112345678', status: 'sent' },
      { phone: '+4917000000001', status: 'failed' },
      { phone: 'garbage', status: 'skipped', reason: 'invalid_phone' },
    ]);
    // The pipeline makes every valid recipient a contact; a partial number is searched among them.
    await s.admin('PUT', `/admin/companies/${companyId}/contacts`, { contacts: [{ phone: '+4915112345678' }, { phone: '+4917000000001' }] });
    const c = await signedInClient(s, companyId);
    for (const q of ['+49 151 12345678', '015112345678', '0151/1234-5678', '5678']) {
      const r = await c.get(`/console/sends?phone=${encodeURIComponent(q)}`);
      assert.equal(r.status, 200, q);
      assert.match(r.text, /1 message found/, q);
      assert.match(r.text, /\+4915112345678/, q);
    }
    assert.match((await c.get('/console/sends?phone=12')).text, /No messages to this number/);
    const filtered = await c.get(`/console/sends/${batch}?phone=0000`);
    assert.match(filtered.text, /1 of 3 messages match/);
    assert.match(filtered.text, /\+4917000000001/);
    assert.doesNotMatch(filtered.text, /\+4915112345678/);
    const all = await c.get(`/console/sends/${batch}`);
    assert.match(all.text, /Not a valid phone number/, 'the skip reason in words');
  });

  test('Credentials shows subscription, connector and channel, never the channel\'s settings or secrets', async () => {
    const companyId = await newCompany(s, { subscription_active: false });
    await s.admin('PUT', `/admin/companies/${companyId}/connector`, { connected: true, provider: 'pushy' });
    await s.admin('PUT', `/admin/companies/${companyId}/channel`, { provider: 'webhook', url: 'http://127.0.0.1:9/hook', secret: 'whsec_TOPSECRETVALUE' });
    const c = await signedInClient(s, companyId);
    const page = await c.get('/console/settings/integrations/credentials');
    assert.equal(page.status, 200);
    assert.match(page.text, /badge-inactive" title="[^"]+">inactive</);
    assert.match(page.text, /badge-connected" title="[^"]+">connected<span class="visually-hidden">[^<]*<\/span><\/span> <span>pushy</);
    assert.match(page.text, /Webhook \(signed HTTP delivery\)/);
    assert.doesNotMatch(page.text, /TOPSECRET|127\.0\.0\.1:9/);
  });

  test('a created key is shown once, never cached, and only its prefix is listed afterwards', async () => {
    const companyId = await newCompany(s);
    const c = await signedInClient(s, companyId);
    const posted = await c.submit('/console/settings/integrations/credentials', '/console/settings/integrations/credentials', { label: '  my <label>  ' });
    assert.equal(posted.status, 303, 'POST-redirect-GET');
    const created = await c.get(posted.location!);
    assert.equal(created.status, 200);
    assert.equal(created.headers.get('cache-control'), 'no-store');
    const key = /value="(cms_live_[A-Za-z0-9]+)"/.exec(created.text)?.[1];
    assert.ok(key);
    assert.match(created.text, /my &lt;label&gt;/);
    const list = await c.get('/console/settings/integrations/credentials');
    assert.equal(list.text.includes(key), false);
    assert.ok(list.text.includes(key.slice(0, 13)));
    const long = await c.submit('/console/settings/integrations/credentials', '/console/settings/integrations/credentials', { label: 'x'.repeat(256) });
    assert.equal(long.status, 400);
    assert.match(long.text, /at most 255 characters/);
    const audit = await s.admin('GET', `/admin/audit?company_id=${companyId}`);
    assert.ok(audit.entries.some((e: { action: string; actor: string }) => e.action === 'key.create' && e.actor.startsWith('console:')));
  });
});
