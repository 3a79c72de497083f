/**
 * Console Contacts over HTTP: search by number and name (paged),
 * the profile with segments, variables and history, edit (errors beside the field, input kept,
 * nothing written), opt-out by hand (source `console`), CSV import with progress to completion
 * (multipart upload with the CSRF token in the form; bad files reported beside the field), streamed
 * export, erasure with a confirmation step; a developer reads but may not change (403); another
 * company's contact and import are 404. The same in Chromium: contacts.browser.test.ts.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { eventually, startTestServer, type TestServer } from '../helpers/server.ts';
import { ConsoleClient, csrfToken, freshEmail, newCompany, PASSWORD, signedInClient } from './helpers.ts';

const run = Math.floor(Math.random() * 1000);
let n = 0;
const phone = () => `+49152${String(run).padStart(3, '0')}${String(10_000 + ++n).padStart(5, '0')}`;

let s: TestServer;
before(async () => {
  s = await startTestServer();
  await s.service.deps.database.db.deleteFrom('console_login_failures').where('bucket', 'like', 'addr:%').execute();
});
after(async () => { await s.close(); });

/** A signed-in client of a new user with `role`. */
async function clientWithRole(companyId: number, role: 'owner' | 'developer' | 'marketer'): Promise<ConsoleClient> {
  const email = freshEmail(role);
  const inv = await s.admin('POST', `/admin/companies/${companyId}/users/invitations`, { email, role }, 201);
  const p = new URL(inv.invite_url).pathname;
  const accepted = await new ConsoleClient(s.url).submit(p, p, { password: PASSWORD, password_confirm: PASSWORD });
  assert.equal(accepted.status, 303);
  const c = new ConsoleClient(s.url);
  await c.signIn(email);
  return c;
}

/** Uploads `csv` through the import form as a browser would (multipart, CSRF token from the page). */
async function upload(c: ConsoleClient, csv: string | Uint8Array, name = 'people.csv', token?: string) {
  const page = await c.get('/console/contacts/import');
  const form = new FormData();
  form.append('_csrf', token ?? csrfToken(page.text));
  form.append('file', new Blob([csv as BlobPart], { type: 'text/csv' }), name);
  const res = await fetch(`${s.url}/console/contacts/import`, {
    method: 'POST', body: form, redirect: 'manual',
    headers: { cookie: [...c.cookies].map(([k, v]) => `${k}=${v}`).join('; ') },
  });
  return { status: res.status, location: res.headers.get('location'), text: await res.text() };
}

const count = async (companyId: number) => Number((await s.service.deps.database.db.selectFrom('contacts')
  .select((eb) => eb.fn.countAll<number>().as('n')).where('company_id', '=', companyId).executeTakeFirstOrThrow()).n);

describe('over HTTP', () => {
  test('search by name and digits, paged; too few digits is an error beside the field', async () => {
    const companyId = await newCompany(s);
    const contacts = Array.from({ length: 55 }, (_, i) => ({ phone: phone(), first_name: i < 3 ? `Zoë${i}` : `Person${i}`, last_name: i === 1 ? 'Zimmermann' : 'Other' }));
    await s.admin('PUT', `/admin/companies/${companyId}/contacts`, { contacts });
    const c = await signedInClient(s, companyId);
    const first = await c.get('/console/contacts');
    assert.equal(first.status, 200);
    assert.equal((first.text.match(/href="\/console\/contacts\/%2B/g) ?? []).length, 50);
    const next = /href="(\/console\/contacts\?after=[^"]+)" rel="next"/.exec(first.text);
    assert.ok(next, 'a next page link');
    const second = await c.get(next[1].replace(/&amp;/g, '&'));
    assert.equal((second.text.match(/href="\/console\/contacts\/%2B/g) ?? []).length, 5);
    assert.doesNotMatch(second.text, /rel="next"/);

    const byName = await c.get(`/console/contacts?q=${encodeURIComponent('zoë')}`);
    assert.equal(byName.status, 200);
    assert.equal((byName.text.match(/href="\/console\/contacts\/%2B/g) ?? []).length, 3);
    const two = await c.get(`/console/contacts?q=${encodeURIComponent('zo zimm')}`);
    assert.equal((two.text.match(/href="\/console\/contacts\/%2B/g) ?? []).length, 1);
    assert.ok(two.text.includes(contacts[1].phone));
    const digits = await c.get(`/console/contacts?q=${contacts[7].phone.slice(-5)}`);
    assert.ok(digits.text.includes(contacts[7].phone));
    const short = await c.get('/console/contacts?q=12');
    assert.equal(short.status, 400);
    assert.match(short.text, /id="q-error"[^>]*>Search by number needs at least 4 digits/);
    assert.match(short.text, /value="12"/);
  });

  test('profile, edit with errors kept, edit, opt-out by hand; history; developer reads only (403)', async () => {
    const companyId = await newCompany(s);
    const key = (await s.admin('POST', `/admin/companies/${companyId}/api-keys`, { label: 't' })).api_key;
    const p = phone();
    await s.admin('PUT', `/admin/companies/${companyId}/contacts`, { contacts: [{ phone: p, first_name: 'Ada', variables: { tier: 'gold', n: 3 } }] });
    const seg = await s.api('/api/segments/create', { key, body: { name: 'Newsletter' } });
    await s.api(`/api/segments/${seg.json.segment_id}/contacts`, { key, body: { contacts: [p], mode: 'add' } });
    const c = await clientWithRole(companyId, 'marketer');
    const url = `/console/contacts/${encodeURIComponent(p)}`;
    const page = await c.get(url);
    assert.equal(page.status, 200);
    assert.match(page.text, /data-segments><a href="\/console\/segments\/\d+">Newsletter<\/a>/);
    assert.match(page.text, /<code>tier<\/code> = gold/);
    assert.match(page.text, /name="var_name_0"/);

    const token = csrfToken(page.text);
    const bad = await c.request('POST', `${url}/edit`, { _csrf: token, first_name: 'Ada', last_name: 'King', var_count: '4', var_name_0: 'tier', var_value_0: 'platinum', var_name_1: 'bad name', var_value_1: 'x', var_name_2: 'n', var_value_2: '3' });
    assert.equal(bad.status, 422);
    assert.match(bad.text, /id="variables-error"[^>]*>&quot;bad name&quot; is not a variable name/);
    assert.match(bad.text, /value="King"/);
    assert.match(bad.text, /value="platinum"/);
    let stored = await s.admin('GET', `/admin/companies/${companyId}/contacts/${encodeURIComponent(p)}`);
    assert.deepEqual([stored.last_name, stored.variables], [null, { tier: 'gold', n: 3 }]);

    const ok = await c.request('POST', `${url}/edit`, { _csrf: token, first_name: 'Ada', last_name: 'King', var_count: '5', var_name_0: 'tier', var_value_0: 'platinum', var_name_1: 'n', var_value_1: '3', var_name_3: 'city', var_value_3: 'Köln' });
    assert.equal(ok.status, 303);
    assert.equal(ok.location, `${url}?done=saved`);
    stored = await s.admin('GET', `/admin/companies/${companyId}/contacts/${encodeURIComponent(p)}`);
    assert.deepEqual([stored.last_name, stored.variables], ['King', { tier: 'platinum', n: 3, city: 'Köln' }]);
    const out = await c.request('POST', `${url}/opt-out`, { _csrf: token, opted_out: 'true' });
    assert.equal(out.status, 303);
    stored = await s.admin('GET', `/admin/companies/${companyId}/contacts/${encodeURIComponent(p)}`);
    assert.deepEqual([stored.opted_out, stored.opt_out_source], [true, 'console']);
    assert.equal(stored.history.length, 2);
    assert.match(stored.history[0].actor, /^console:marketer-/);
    const after = await c.get(`${url}?done=opted_out`);
    assert.match(after.text, /class="flash"[^>]*>The contact is opted out/);
    assert.match(after.text, /opted out of campaigns/);
    assert.match(after.text, /data-opt-out-source>console</);

    const dev = await clientWithRole(companyId, 'developer');
    const devPage = await dev.get(url);
    assert.equal(devPage.status, 200);
    assert.doesNotMatch(devPage.text, /name="var_name_0"|Erase this contact|Import CSV/);
    const refused = await dev.request('POST', `${url}/opt-out`, { _csrf: csrfToken(devPage.text), opted_out: 'false' });
    assert.equal(refused.status, 403);
    assert.equal((await s.admin('GET', `/admin/companies/${companyId}/contacts/${encodeURIComponent(p)}`)).opted_out, true);
    assert.equal((await upload(dev, `phone\n${phone()}\n`)).status, 403);
  });

  test('import: progress page refreshes until completed; bad files reported beside the field; CSRF needed', async () => {
    const companyId = await newCompany(s);
    const c = await signedInClient(s, companyId);
    const rows = Array.from({ length: 1500 }, (_, i) => `${phone()}\tName${i}\tv${i}`);
    rows.splice(3, 0, 'not-a-number\tX\ty');
    const up = await upload(c, `phone\tfirst_name\tcode\n${rows.join('\n')}\n`, 'tabs.csv');
    assert.equal(up.status, 303, up.text.slice(0, 500));
    assert.match(up.location ?? '', /^\/console\/contacts\/imports\/\d+$/);
    const done = await eventually(async () => {
      const r = await c.get(up.location!);
      assert.equal(r.status, 200);
      if (/data-import-status="completed"/.test(r.text)) return r;
      assert.equal(r.headers.get('refresh'), '2', 'a running import reloads itself');
      return undefined;
    });
    assert.equal(done.headers.get('refresh'), null);
    assert.match(done.text, /data-count="created">1,500</);
    assert.match(done.text, /data-count="failed">1</);
    assert.match(done.text, /<td data-label="Line" class="num"><span class="cell">5<\/span><\/td><td data-label="Problem"><span class="cell">&quot;not-a-number&quot; is not a valid phone number/);
    assert.match(done.text, /separated by tab/);
    assert.equal(await count(companyId), 1500);
    const list = await c.get('/console/contacts/import');
    assert.match(list.text, /tabs\.csv/);

    const cases: [string | Uint8Array, RegExp][] = [
      ['mobile;name\n+4915112345678;A\n', /no &quot;phone&quot; column/],
      [Buffer.from('phone,first_name\n+4915112345678,J\xfcrgen\n', 'latin1'), /not UTF-8/],
      ['phone\n', /no contact rows/],
      [new Uint8Array(21 * 1024 * 1024).fill(65), /larger than 20 MiB/],
    ];
    for (const [csv, msg] of cases) {
      const r = await upload(c, csv);
      assert.equal(r.status, 422, String(msg));
      assert.match(r.text, /id="file-error"/);
      assert.match(r.text, msg);
    }
    const forged = await upload(c, `phone\n${phone()}\n`, 'x.csv', 'forged-token');
    assert.equal(forged.status, 403);
    assert.equal(await count(companyId), 1500, 'nothing written by refused uploads');
  });

  test('export: every contact as CSV; erase with a confirmation step; another company sees 404', async () => {
    const companyId = await newCompany(s);
    const [a, b] = [phone(), phone()];
    await s.admin('PUT', `/admin/companies/${companyId}/contacts`, { contacts: [{ phone: a, first_name: 'Ada', variables: { tier: 'gold' } }, { phone: b }] });
    const c = await signedInClient(s, companyId);
    const res = await fetch(`${s.url}/console/contacts/export.csv`, { headers: { cookie: [...c.cookies].map(([k, v]) => `${k}=${v}`).join('; ') } });
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/csv/);
    assert.equal(await res.text(), `phone,first_name,last_name,opted_out,opt_out_source,opt_out_at,tags,phone_country,last_inbound_at,last_sent_at,last_delivered_at,last_read_at,tier\n${[[a, 'Ada', '', 'false', '', '', '', 'DE', '', '', '', '', 'gold'], [b, '', '', 'false', '', '', '', 'DE', '', '', '', '', '']].sort().map((r) => r.join(',')).join('\n')}\n`);

    const other = await signedInClient(s, await newCompany(s));
    const url = `/console/contacts/${encodeURIComponent(a)}`;
    for (const path of [url, `${url}/erase`]) assert.equal((await other.get(path)).status, 404, path);
    const otherToken = csrfToken((await other.get('/console/contacts')).text);
    assert.equal((await other.request('POST', `${url}/erase`, { _csrf: otherToken, confirm: 'yes' })).status, 404);
    assert.equal((await other.request('POST', `${url}/edit`, { _csrf: otherToken, var_count: '0' })).status, 404);
    const foreignExport = await fetch(`${s.url}/console/contacts/export.csv`, { headers: { cookie: [...other.cookies].map(([k, v]) => `${k}=${v}`).join('; ') } });
    assert.ok(!(await foreignExport.text()).includes(a));

    const confirm = await c.get(`${url}/erase`);
    assert.equal(confirm.status, 200);
    assert.match(confirm.text, /Erase contact/);
    const token = csrfToken(confirm.text);
    const unticked = await c.request('POST', `${url}/erase`, { _csrf: token });
    assert.equal(unticked.status, 422);
    assert.match(unticked.text, /id="confirm-error"/);
    assert.equal((await c.get(url)).status, 200, 'not erased without the confirmation');
    const erased = await c.request('POST', `${url}/erase`, { _csrf: token, confirm: 'yes' });
    assert.equal(erased.status, 303);
    assert.equal(erased.location, '/console/contacts?done=erased');
    assert.equal((await c.get(url)).status, 404);
    assert.match((await c.get('/console/contacts?done=erased')).text, /The contact was erased/);
    const audit = await s.admin('GET', `/admin/audit?company_id=${companyId}`);
    const entry = audit.entries.find((e: any) => e.action === 'contact.erase');
    assert.match(entry.actor, /^console:/);
    assert.ok(!JSON.stringify(audit).includes('Ada'));
  });
});
