/**
 * Segments in the console, over HTTP with signed-in users and then in Chromium:
 * create (4.1's name rule and limit of 20), rename, delete (frees a slot); add and remove members by
 * pasted numbers, by digests and by uploaded CSV (multipart), with the summary (added, already members,
 * not found, invalid with line numbers) shown once after the redirect; CSV refusals (delimiter,
 * encoding, size, both inputs) beside the field with nothing written; members paged 50 at a time;
 * another company's segment 404 on every route; a multipart form without the CSRF token 403.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { BrowserContext, Page } from 'playwright-core';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { browserSkipReason, csrfToken, launchBrowser, newCompany, newUser, PASSWORD, signedInClient, withScreenshotOnFailure, type Answer, type ConsoleClient, checkPage } from './helpers.ts';

let s: TestServer;
before(async () => { s = await startTestServer(); });
after(() => s.close());

const sha = (text: string) => createHash('sha256').update(text).digest('hex');
const count = (text: string, name: string) => Number(new RegExp(`data-count="${name}">([\\d,]+)<`).exec(text)?.[1].replace(/,/g, ''));
const segmentIdOf = (location: string | null) => Number(/^\/console\/segments\/(\d+)\?done=created$/.exec(location ?? '')?.[1]);

/** POSTs a multipart form (as a browser does for the members form) with the page's CSRF token unless `csrf` is false. */
async function postMultipart(cl: ConsoleClient, pagePath: string, action: string, fields: Record<string, string>, file?: { name: string; data: Uint8Array | string }, csrf = true): Promise<Answer> {
  const fd = new FormData();
  if (csrf) fd.append('_csrf', csrfToken((await cl.get(pagePath)).text));
  for (const [k, v] of Object.entries(fields)) fd.append(k, v);
  fd.append('file', new Blob([(file?.data ?? new Uint8Array()) as BlobPart], { type: file ? 'text/csv' : 'application/octet-stream' }), file?.name ?? '');
  const res = await fetch(cl.base + action, {
    method: 'POST', body: fd, redirect: 'manual',
    headers: { cookie: [...cl.cookies].map(([k, v]) => `${k}=${v}`).join('; ') },
  });
  for (const line of res.headers.getSetCookie()) {
    const [pair, ...attrs] = line.split(';');
    const eq = pair.indexOf('=');
    const name = pair.slice(0, eq).trim();
    const value = pair.slice(eq + 1).trim();
    if (attrs.some((a) => /^\s*max-age=0\s*$/i.test(a)) || value === '') cl.cookies.delete(name);
    else cl.cookies.set(name, value);
  }
  return { status: res.status, headers: res.headers, text: await res.text(), location: res.headers.get('location') };
}

async function createSegment(cl: ConsoleClient, name: string): Promise<number> {
  const r = await cl.submit('/console/segments', '/console/segments', { name });
  assert.equal(r.status, 303, r.text.slice(0, 500));
  return segmentIdOf(r.location);
}

async function members(segmentId: number): Promise<string[]> {
  const rows = await s.service.deps.database.db.selectFrom('segment_members as m').innerJoin('contacts as c', 'c.contact_id', 'm.contact_id')
    .select('c.phone').where('m.segment_id', '=', segmentId).orderBy('c.phone').execute();
  return rows.map((r) => r.phone);
}

async function auditActions(companyId: number): Promise<string[]> {
  const { entries } = await s.admin('GET', `/admin/audit?company_id=${companyId}&limit=100`);
  return entries.filter((e: { action: string }) => e.action.startsWith('segment.'))
    .map((e: { action: string; actor: string }) => `${e.actor.startsWith('console:') ? 'console' : e.actor} ${e.action}`).reverse();
}

describe('segments over HTTP', () => {
  test('create, rename and delete: 4.1 name rules, errors beside the field with the input kept, notices, audit', async () => {
    const companyId = await newCompany(s);
    const cl = await signedInClient(s, companyId);
    const empty = await cl.submit('/console/segments', '/console/segments', { name: '   ' });
    assert.equal(empty.status, 422);
    assert.match(empty.text, /id="name"[^>]*aria-invalid="true"[^>]*>\s*<small id="name-error" class="error" role="alert">Enter a name\./);
    const long = 'ä'.repeat(256);
    const tooLong = await cl.submit('/console/segments', '/console/segments', { name: long });
    assert.equal(tooLong.status, 422);
    assert.match(tooLong.text, /at most 255 characters \(this one has 256\)/);
    assert.ok(tooLong.text.includes(`value="${long}"`), 'input kept');
    assert.equal((await s.service.deps.database.db.selectFrom('segments').select('segment_id').where('company_id', '=', companyId).execute()).length, 0, 'nothing written');

    const id = await createSegment(cl, `  ${'ü'.repeat(255)}  `);
    const page = await cl.get(`/console/segments/${id}?done=created`);
    assert.equal(page.status, 200);
    assert.match(page.text, /<p class="flash" role="status">Segment created\. Add members below\.<\/p>/);
    assert.match(page.text, new RegExp(`<h1>${'ü'.repeat(255)}</h1>`), 'name trimmed, 255 characters allowed');

    const bad = await cl.submit(`/console/segments/${id}`, `/console/segments/${id}/rename`, { name: '' });
    assert.equal(bad.status, 422);
    assert.match(bad.text, /<small id="name-error" class="error" role="alert">Enter a name\./);
    const renamed = await cl.submit(`/console/segments/${id}`, `/console/segments/${id}/rename`, { name: 'VIP <customers>' });
    assert.equal(renamed.status, 303);
    assert.equal(renamed.location, `/console/segments/${id}?done=renamed`);
    const after = await cl.get(renamed.location!);
    assert.match(after.text, /<h1>VIP &lt;customers&gt;<\/h1>/);
    assert.match(after.text, /Segment renamed\./);
    const list = await cl.get('/console/segments');
    assert.match(list.text, new RegExp(`data-segment-id="${id}"`));

    const confirm = await cl.get(`/console/segments/${id}/delete`);
    assert.equal(confirm.status, 200);
    assert.match(confirm.text, /Campaign sends already made to this segment, including scheduled ones, are not changed/);
    const del = await cl.submit(`/console/segments/${id}/delete`, `/console/segments/${id}/delete`, {});
    assert.equal(del.status, 303);
    assert.equal(del.location, '/console/segments?done=deleted');
    assert.match((await cl.get(del.location!)).text, /The segment was deleted\./);
    assert.equal((await cl.get(`/console/segments/${id}`)).status, 404);
    assert.deepEqual(await auditActions(companyId), ['console segment.create', 'console segment.rename', 'console segment.delete']);
  });

  test('the 21st segment is refused beside the name (nothing written); deleting one frees a slot, for 4.1 too', async () => {
    const companyId = await newCompany(s);
    const cl = await signedInClient(s, companyId);
    const ids: number[] = [];
    for (let i = 1; i <= 20; i++) ids.push(await createSegment(cl, `S${i}`));
    const full = await cl.submit('/console/segments', '/console/segments', { name: 'S21' });
    assert.equal(full.status, 422);
    assert.match(full.text, /<small id="name-error" class="error" role="alert">Segment limit reached: a company can hold at most 20 segments/);
    assert.match(full.text, /value="S21"/);
    assert.match(full.text, /you have 20\./);
    await cl.submit(`/console/segments/${ids[0]}/delete`, `/console/segments/${ids[0]}/delete`, {});
    const key = (await s.admin('POST', `/admin/companies/${companyId}/api-keys`, {}, 201)).api_key;
    const viaApi = await s.api('/api/segments/create', { key, body: { name: 'from the API' } });
    assert.equal(viaApi.status, 200, viaApi.text);
    assert.equal((await s.api('/api/segments/create', { key, body: { name: 'one too many' } })).status, 400);
  });

  test('pasted numbers: matched as 4.2 does, summary with line numbers shown once after the redirect', async () => {
    const companyId = await newCompany(s, { default_country: 'DE' });
    await s.admin('PUT', `/admin/companies/${companyId}/contacts`, { contacts: [{ phone: '+4915112340001' }, { phone: '+4915112340002' }, { phone: '+4915112340003' }] });
    const cl = await signedInClient(s, companyId);
    const id = await createSegment(cl, 'Paste');
    const page = `/console/segments/${id}`;
    const numbers = '+4915112340001\n0151 1234 0002, 015112340002\n\nnot a number; +4915112349999\n+4915112340003\nnot a number';
    const r = await postMultipart(cl, page, `${page}/members`, { mode: 'add', numbers });
    assert.equal(r.status, 303, /role="alert">([^<]*)/.exec(r.text)?.[1] ?? '');
    assert.equal(r.location, page);
    const shown = await cl.get(page);
    assert.deepEqual(['processed', 'unchanged', 'not_found', 'invalid'].map((k) => count(shown.text, k)), [3, 0, 1, 1]);
    assert.match(shown.text, /Invalid: line 4 \(<code>not a number<\/code>\)\./);
    assert.match(shown.text, /\(from pasted text\)/);
    assert.deepEqual(await members(id), ['+4915112340001', '+4915112340002', '+4915112340003']);
    assert.doesNotMatch((await cl.get(page)).text, /data-summary/, 'the summary is shown once');

    const again = await cl.submit(page, `${page}/members`, { mode: 'add', numbers: '+4915112340001\n+4915112340002' }); // urlencoded works too
    assert.equal(again.status, 303);
    const againShown = (await cl.get(page)).text;
    assert.deepEqual(['processed', 'unchanged'].map((k) => count(againShown, k)), [0, 2]);
    const removed = await postMultipart(cl, page, `${page}/members`, { mode: 'delete', numbers: '+4915112340001\n+4915112340099' });
    assert.equal(removed.status, 303);
    const afterRemove = await cl.get(page);
    assert.match(afterRemove.text, /Members removed/);
    assert.deepEqual(['processed', 'unchanged', 'not_found', 'invalid'].map((k) => count(afterRemove.text, k)), [1, 0, 1, 0]);
    assert.deepEqual(await members(id), ['+4915112340002', '+4915112340003']);
    assert.deepEqual((await auditActions(companyId)).slice(-3), ['console segment.members.add', 'console segment.members.add', 'console segment.members.remove']);

    const nothing = await postMultipart(cl, page, `${page}/members`, { mode: 'add', numbers: ' \n ' });
    assert.equal(nothing.status, 422);
    assert.match(nothing.text, /<small id="numbers-error" class="error" role="alert">Paste at least one phone number, or choose a CSV file\./);
    const badMode = await postMultipart(cl, page, `${page}/members`, { mode: 'merge', numbers: '+4915112340001' });
    assert.equal(badMode.status, 422);
    assert.match(badMode.text, /id="mode-error"[^>]*>Choose add or remove\./);
    assert.ok(badMode.text.includes('>+4915112340001</textarea>'), 'pasted text kept');
  });

  test('CSV uploads: the phone column or digests; wrong delimiter, encoding, size or both inputs refused beside the field, nothing written', async () => {
    const companyId = await newCompany(s);
    await s.admin('PUT', `/admin/companies/${companyId}/contacts`, { contacts: [{ phone: '+4915112340001' }, { phone: '+4915112340002' }] });
    const cl = await signedInClient(s, companyId);
    const id = await createSegment(cl, 'CSV');
    const page = `/console/segments/${id}`;
    const csv = '\uFEFFfirst_name,Phone\nAda,+4915112340001\n"Lovelace, A.",not-a-number\nBob,\nAlan,015112340002\n';
    const up = await postMultipart(cl, page, `${page}/members`, { mode: 'add', numbers: '' }, { name: 'people.csv', data: csv });
    assert.equal(up.status, 303, up.text.slice(0, 500));
    const shown = await cl.get(page);
    assert.deepEqual(['processed', 'not_found', 'invalid'].map((k) => count(shown.text, k)), [2, 0, 1]);
    assert.match(shown.text, /line 3 \(<code>not-a-number<\/code>\)/);
    assert.match(shown.text, /\(from file people\.csv\)/);

    const digests = `sha256\n${sha('+4915112340001')}\n${sha('4915112340002').toUpperCase()}\n${'0'.repeat(64)}\nxyz\n`;
    const del = await postMultipart(cl, page, `${page}/members`, { mode: 'delete', numbers: '', hashed: 'on' }, { name: 'd.csv', data: digests });
    assert.equal(del.status, 303);
    const delShown = (await cl.get(page)).text;
    assert.deepEqual(['processed', 'not_found', 'invalid'].map((k) => count(delShown, k)), [2, 1, 1]);
    assert.deepEqual(await members(id), []);

    const refusals: [string, Record<string, string>, { name: string; data: Uint8Array | string }, string, RegExp][] = [
      ['semicolons', { mode: 'add', numbers: '' }, { name: 'x.csv', data: 'phone;name\n+4915112340001;Ada\n' }, 'file', /separated by semicolons: save it comma-separated/],
      ['tabs', { mode: 'add', numbers: '' }, { name: 'x.csv', data: 'phone\tname\n+4915112340001\tAda\n' }, 'file', /separated by tabs/],
      ['latin-1', { mode: 'add', numbers: '' }, { name: 'x.csv', data: Buffer.from('phone,name\n+4915112340001,J\xfcrgen\n', 'latin1') }, 'file', /not UTF-8 text \(line 2\)/],
      ['utf-16', { mode: 'add', numbers: '' }, { name: 'x.csv', data: Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('phone\n+4915112340001\n', 'utf16le')]) }, 'file', /UTF-16 text/],
      ['broken quotes', { mode: 'add', numbers: '' }, { name: 'x.csv', data: 'phone\n"+4915112340001\n' }, 'file', /not valid CSV/],
      ['too large', { mode: 'add', numbers: '' }, { name: 'big.csv', data: Buffer.alloc(5 * 1024 * 1024 + 1, '1\n') }, 'file', /larger than 5 MiB/],
      ['both', { mode: 'add', numbers: '+4915112340001' }, { name: 'x.csv', data: 'phone\n+4915112340002\n' }, 'numbers', /Paste numbers or choose a file, not both\./],
      ['no numbers in the file', { mode: 'add', numbers: '' }, { name: 'x.csv', data: 'phone\n\n' }, 'file', /The file holds no phone numbers\./],
    ];
    for (const [what, fields, file, at, message] of refusals) {
      const r = await postMultipart(cl, page, `${page}/members`, fields, file);
      assert.equal(r.status, 422, what);
      const beside = new RegExp(`<small id="${at}-error" class="error" role="alert">([^<]*)</small>`).exec(r.text)?.[1] ?? '';
      assert.match(beside, message, what);
      assert.deepEqual(await members(id), [], `${what}: nothing written`);
    }
  });

  test('members are paged 50 at a time by keyset, with the count', async () => {
    const companyId = await newCompany(s);
    const phones = Array.from({ length: 120 }, (_, i) => `+49151200${String(i).padStart(5, '0')}`);
    await s.admin('PUT', `/admin/companies/${companyId}/contacts`, { contacts: phones.map((phone) => ({ phone })) });
    const cl = await signedInClient(s, companyId);
    const id = await createSegment(cl, 'Big');
    assert.equal((await postMultipart(cl, `/console/segments/${id}`, `/console/segments/${id}/members`, { mode: 'add' }, { name: 'all.csv', data: phones.join('\n') })).status, 303);
    const seen: string[] = [];
    let path: string | undefined = `/console/segments/${id}`;
    const sizes: number[] = [];
    while (path) {
      const r = await cl.get(path);
      assert.equal(r.status, 200);
      assert.match(r.text, /<dd data-members>120<\/dd>/);
      const onPage = [...r.text.matchAll(/data-label="Phone"><span class="cell"><a href="[^"]+">(\+\d+)<\/a>/g)].map((m) => m[1]);
      sizes.push(onPage.length);
      seen.push(...onPage);
      path = /href="([^"]+)" rel="next"/.exec(r.text)?.[1].replace(/&amp;/g, '&');
    }
    assert.deepEqual(sizes, [50, 50, 20]);
    assert.deepEqual(seen, phones);
  });

  test('a developer sees segments without forms and is refused a change (403, nothing written); a marketer may change them', async () => {
    const companyId = await newCompany(s);
    await s.admin('PUT', `/admin/companies/${companyId}/contacts`, { contacts: [{ phone: '+4915112340001' }] });
    const marketer = await signedInClient(s, companyId, 'marketer');
    const id = await createSegment(marketer, 'Shared');
    assert.equal((await postMultipart(marketer, `/console/segments/${id}`, `/console/segments/${id}/members`, { mode: 'add', numbers: '+4915112340001' })).status, 303);
    const developer = await signedInClient(s, companyId, 'developer');
    for (const p of ['/console/segments', `/console/segments/${id}`, `/console/segments/${id}/delete`]) {
      const page = await developer.get(p);
      assert.equal(page.status, 200, p);
      assert.match(page.text, /data-read-only/, p);
      assert.doesNotMatch(page.text, /action="\/console\/segments[^"]*"/, `${p}: no segment form`);
    }
    const refused = await postMultipart(developer, `/console/segments/${id}`, `/console/segments/${id}/members`, { mode: 'delete', numbers: '+4915112340001' });
    assert.equal(refused.status, 403);
    assert.equal((await developer.submit('/console/segments', `/console/segments/${id}/delete`, {})).status, 403);
    assert.deepEqual(await members(id), ['+4915112340001']);
  });

  test("another company's segment answers 404 on every route and nothing changes; multipart without CSRF token is 403", async () => {
    const a = await newCompany(s);
    const b = await newCompany(s);
    await s.admin('PUT', `/admin/companies/${b}/contacts`, { contacts: [{ phone: '+4915112340001' }] });
    const userA = await signedInClient(s, a);
    const userB = await signedInClient(s, b);
    const theirs = await createSegment(userB, 'Theirs');
    const own = await createSegment(userA, 'Mine');
    for (const p of [`/console/segments/${theirs}`, `/console/segments/${theirs}/delete`, '/console/segments/2147483647', '/console/segments/abc', '/console/segments/99999999999']) {
      const r = await userA.get(p);
      assert.equal(r.status, 404, p);
      assert.doesNotMatch(r.text, /Theirs/);
    }
    const mine = `/console/segments/${own}`;
    assert.equal((await userA.submit(mine, `/console/segments/${theirs}/rename`, { name: 'Hijacked' })).status, 404);
    assert.equal((await userA.submit(mine, `/console/segments/${theirs}/delete`, {})).status, 404);
    assert.equal((await postMultipart(userA, mine, `/console/segments/${theirs}/members`, { mode: 'add', numbers: '+4915112340001' })).status, 404);
    assert.equal((await userA.submit(mine, `/console/segments/${theirs}/members`, { mode: 'add', numbers: '+4915112340001' })).status, 404);
    const forged = await postMultipart(userB, `/console/segments/${theirs}`, `/console/segments/${theirs}/members`, { mode: 'add', numbers: '+4915112340001' }, undefined, false);
    assert.equal(forged.status, 403);
    const still = await userB.get(`/console/segments/${theirs}`);
    assert.match(still.text, /<h1>Theirs<\/h1>/);
    assert.deepEqual(await members(theirs), []);
  });
});

// ---------------------------------------------------------------------------------------------------
// Browser

const skip = browserSkipReason();
if (skip) console.log(`# SKIP segment browser tests: ${skip}`);

describe('segments in a browser', () => {
  let browser: { context: BrowserContext; close(): Promise<void> };
  before(async () => {
    if (skip) return;
    await s.service.deps.database.db.deleteFrom('console_login_failures').where('bucket', 'like', 'addr:%').execute();
    browser = await launchBrowser();
  });
  after(async () => { if (!skip) await browser.close(); });


  for (const width of [360, 1280]) {
    test(`at ${width} px: create, add by pasted numbers, page, rename, remove, delete`, { skip }, async () => {
      const page = await browser.context.newPage();
      await page.setViewportSize({ width, height: 900 });
      await withScreenshotOnFailure(page, `segments-${width}`, async () => {
        const companyId = await newCompany(s);
        const phones = Array.from({ length: 55 }, (_, i) => `+49151300${String(i).padStart(5, '0')}`);
        await s.admin('PUT', `/admin/companies/${companyId}/contacts`, { contacts: phones.map((phone, i) => ({ phone, first_name: `Person ${i}` })) });
        const email = await newUser(s, companyId);
        await browser.context.clearCookies();
        await page.goto(`${s.url}/console/login`);
        await page.getByLabel('Email').fill(email);
        await page.getByLabel('Password').fill(PASSWORD);
        await page.getByRole('button', { name: 'Sign in' }).click();
        await page.waitForURL(/\/console\/(?!login)/);

        await page.goto(`${s.url}/console/segments`);
        await checkPage(page, 'segments (empty)');
        await page.getByRole('button', { name: 'Create segment' }).click();
        await page.locator('#name-error').waitFor();
        await checkPage(page, 'segments with an error');
        await page.getByLabel('Name').fill('Newsletter');
        await page.getByRole('button', { name: 'Create segment' }).click();
        await page.waitForURL(/\/console\/segments\/\d+\?done=created$/);
        await checkPage(page, 'new segment');

        await page.getByLabel(/^Phone numbers/).fill([...phones, 'oops'].join('\n'));
        await page.getByRole('button', { name: 'Apply' }).click();
        await page.locator('[data-summary]').waitFor();
        assert.equal(await page.locator('[data-count="processed"]').textContent(), '55');
        assert.match(await page.locator('[data-summary]').textContent() ?? '', /line 56/);
        await checkPage(page, 'segment with the summary');
        assert.equal(await page.locator('td[data-label="Phone"]').count(), 50);
        await page.getByRole('link', { name: 'Next page' }).click();
        await page.waitForURL(/\?after=\d+$/);
        assert.equal(await page.locator('td[data-label="Phone"]').count(), 5);
        await checkPage(page, 'second page of members');

        await page.getByLabel('New name').fill('Weekly newsletter');
        await page.getByRole('button', { name: 'Rename' }).click();
        await page.waitForURL(/\?done=renamed$/);
        await page.getByRole('heading', { level: 1, name: 'Weekly newsletter' }).waitFor();

        await page.getByLabel('Remove from the segment').check();
        await page.getByLabel(/^Phone numbers/).fill(phones.slice(0, 5).join(', '));
        await page.getByRole('button', { name: 'Apply' }).click();
        await page.getByRole('heading', { name: /Members removed/ }).waitFor();
        assert.equal(await page.locator('[data-members]').textContent(), '50');

        await page.getByRole('link', { name: 'Delete this segment…' }).click();
        await page.waitForURL(/\/delete$/);
        await checkPage(page, 'delete confirmation');
        await page.getByRole('button', { name: 'Delete segment' }).click();
        await page.waitForURL(/\/console\/segments\?done=deleted$/);
        await page.getByText('The segment was deleted.').waitFor();
        await checkPage(page, 'segments after delete');
      });
      await page.close();
    });
  }
});
