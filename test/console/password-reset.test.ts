/**
 * Password reset by one-time link, /console/password-reset/:token (src/console/routes/password-reset.ts), through the real server with a FakeClock: the form, errors beside the field with
 * the link still usable, success ends every session and leads to sign-in, used / superseded / expired /
 * unknown links answer 404, CSRF is required, the token is never stored or logged at info level.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { FakeClock, startTestServer, type TestServer } from '../helpers/server.ts';
import { ConsoleClient, freshEmail, newCompany, newUser, PASSWORD, userIdOf } from './helpers.ts';

const clock = new FakeClock(Date.parse('2030-05-01T08:00:00Z'));
let s: TestServer;
before(async () => { s = await startTestServer({ role: 'api', clock }); });
after(() => s.close());

const NEW = 'a freshly chosen passphrase';

/** A user (role developer) with a signed-in browser, and a reset link made by the operator. */
async function setup(): Promise<{ email: string; userId: number; browser: ConsoleClient; path: string }> {
  const companyId = await newCompany(s);
  const email = await newUser(s, companyId, freshEmail('reset'), 'developer');
  const browser = new ConsoleClient(s.url);
  await browser.signIn(email);
  const userId = await userIdOf(s, email);
  const link = await s.admin('POST', `/admin/users/${userId}/password-resets`, undefined, 201);
  return { email, userId, browser, path: new URL(link.reset_url).pathname };
}

describe('password reset page', () => {
  test('shows whose password it sets; needs no session', async () => {
    const { email, path } = await setup();
    const page = await new ConsoleClient(s.url).get(path);
    assert.equal(page.status, 200);
    assert.match(page.text, /<h1>Choose a new password<\/h1>/);
    assert.match(page.text, new RegExp(`<strong>${email.replace(/[.]/g, '\\.')}</strong>`));
    assert.match(page.text, /autocomplete="new-password"/);
    assert.equal(page.headers.get('cache-control'), 'no-store');
    assert.equal(page.headers.get('referrer-policy'), 'no-referrer', 'the token does not leak through Referer');
  });

  test('errors beside the field; the link stays usable; nothing changes', async () => {
    const { email, path } = await setup();
    const anon = new ConsoleClient(s.url);
    const differ = await anon.submit(path, path, { password: NEW, password_confirm: `${NEW}!` });
    assert.equal(differ.status, 400);
    assert.match(differ.text, /<input id="password"[^>]*aria-describedby="password-error password-hint" aria-invalid="true"[^>]*>\s*<small id="password-error" class="error" role="alert">The two passwords differ\.<\/small>/);
    const short = await anon.submit(path, path, { password: 'short', password_confirm: 'short' });
    assert.equal(short.status, 400);
    assert.match(short.text, /at least 10 characters/);
    assert.equal((await anon.get(path)).status, 200, 'still usable');
    await new ConsoleClient(s.url).signIn(email); // the old password still works
  });

  test('success: every session of the user ends, sign-in with the new password; the link is used up; audited', async () => {
    const { email, userId, browser, path } = await setup();
    const phone = new ConsoleClient(s.url);
    await phone.signIn(email);
    const anon = new ConsoleClient(s.url);
    const r = await anon.submit(path, path, { password: NEW, password_confirm: NEW });
    assert.equal(r.status, 303);
    assert.equal(r.location, '/console/login?done=reset');
    assert.match((await anon.get('/console/login?done=reset')).text, /Your new password is set/);
    for (const c of [browser, phone]) assert.equal((await c.get('/console/overview')).status, 303, 'signed out');
    await assert.rejects(new ConsoleClient(s.url).signIn(email, PASSWORD));
    await new ConsoleClient(s.url).signIn(email, NEW);
    assert.equal((await anon.get(path)).status, 404, 'used up');
    const again = await anon.request('POST', path, { _csrf: 'x', password: NEW, password_confirm: NEW });
    assert.equal(again.status, 403, 'a form without a valid CSRF token is refused first');
    const audit = await s.admin('GET', `/admin/audit?limit=200`);
    assert.ok(audit.entries.some((e: any) => e.action === 'user.password_reset' && e.actor === `console:${email}` && e.target === `user:${userId}`));
  });

  test('expired after one hour (service clock); superseded by a newer link; unknown or malformed tokens: 404', async () => {
    const { userId, path } = await setup();
    const anon = new ConsoleClient(s.url);
    clock.advance(60 * 60_000 - 1000);
    assert.equal((await anon.get(path)).status, 200, 'just before the hour');
    clock.advance(1000);
    const expired = await anon.get(path);
    assert.equal(expired.status, 404);
    assert.match(expired.text, /Reset link not valid/);
    const a = await s.admin('POST', `/admin/users/${userId}/password-resets`, undefined, 201);
    const b = await s.admin('POST', `/admin/users/${userId}/password-resets`, undefined, 201);
    assert.equal((await anon.get(new URL(a.reset_url).pathname)).status, 404, 'superseded');
    const bp = new URL(b.reset_url).pathname;
    const page = await anon.get(bp);
    assert.equal(page.status, 200);
    const token = /name="_csrf" value="([^"]+)"/.exec(page.text)![1];
    assert.equal((await anon.request('POST', new URL(a.reset_url).pathname, { _csrf: token, password: NEW, password_confirm: NEW })).status, 404);
    for (const bad of ['x', 'A'.repeat(43), 'A'.repeat(500), '%00%00']) assert.equal((await anon.get(`/console/password-reset/${bad}`)).status, 404, bad);
  });

  test('the token is stored only as its hash', async () => {
    const { path } = await setup();
    const token = path.split('/').pop()!;
    const rows = (await sql`SELECT * FROM console_password_resets`.execute(s.service.deps.database.db)).rows;
    assert.ok(rows.length > 0);
    assert.equal(JSON.stringify(rows).includes(token), false);
  });
});
