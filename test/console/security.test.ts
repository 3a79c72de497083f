/**
 * Console security over plain HTTP (acceptance "Security tests"): no page or form works
 * without a session; CSRF tokens are checked on every form; a user of company A gets 404 for company
 * B's batch, segment and key ids; sign-in is throttled; cookies and headers are set as promised.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { ConsoleClient, csrfToken, freshEmail, insertBatch, invite, newCompany, newUser, PASSWORD, signedInClient } from './helpers.ts';

let s: TestServer;
before(async () => {
  s = await startTestServer();
  // Runs sharing a PostgreSQL database all sign in from 127.0.0.1: start this file with that address's
  // failure count at zero (the per-email counts are per test user anyway).
  await s.service.deps.database.db.deleteFrom('console_login_failures').where('bucket', 'like', 'addr:%').execute();
});
after(() => s.close());

/** Every page of a signed-in user (with ids that exist for `ids`). */
function pages(ids: { segment: number; batch: string; key: number }): string[] {
  return [
    '/console', '/console/', '/console/settings/integrations/credentials', `/console/settings/integrations/credentials/${ids.key}/revoke`,
    '/console/segments', `/console/segments/${ids.segment}`, '/console/sends', '/console/sends?phone=%2B4915112345678',
    `/console/sends/${ids.batch}`, '/console/account/password',
  ];
}

/** Every form of a signed-in user, with plausible fields. */
function forms(ids: { key: number }): [string, Record<string, string>][] {
  return [
    ['/console/settings/integrations/credentials', { label: 'x' }],
    [`/console/settings/integrations/credentials/${ids.key}/revoke`, {}],
    ['/console/account/password', { current_password: PASSWORD, new_password: 'another long password', new_password_confirm: 'another long password' }],
    ['/console/logout', {}],
  ];
}

async function fixtures(companyId: number) {
  const key = await s.admin('POST', `/admin/companies/${companyId}/api-keys`, { label: 'fixture' });
  const db = s.service.deps.database.db;
  const seg = await db.insertInto('segments').values({ company_id: companyId, name: 'fixture segment' }).returning('segment_id').executeTakeFirstOrThrow();
  const batch = await insertBatch(s, companyId, [{ phone: '+4915112345678', status: 'sent' }, { phone: 'bad', status: 'skipped', reason: 'invalid_phone' }]);
  return { key: key.key_id as number, keyText: key.api_key as string, segment: seg.segment_id, batch };
}

const keyIsActive = async (keyId: number) => {
  const row = await s.service.deps.database.db.selectFrom('api_keys').select('revoked_at').where('key_id', '=', keyId).executeTakeFirstOrThrow();
  return row.revoked_at === null;
};

describe('without a session', () => {
  test('every page redirects to sign-in (303, next kept) and shows nothing', async () => {
    const companyId = await newCompany(s);
    const ids = await fixtures(companyId);
    const anon = new ConsoleClient(s.url);
    for (const p of pages(ids)) {
      const r = await anon.get(p);
      assert.equal(r.status, 303, p);
      assert.match(r.location ?? '', /^\/console\/login(\?next=|$)/, p);
      assert.equal(r.text.includes('fixture'), false, p);
    }
    const r = await anon.get('/console/sends');
    assert.equal(r.location, '/console/login?next=%2Fconsole%2Fsends');
  });

  test('no form works: even with a valid CSRF pair, every POST is redirected to sign-in and changes nothing', async () => {
    const companyId = await newCompany(s);
    const ids = await fixtures(companyId);
    const anon = new ConsoleClient(s.url);
    const token = csrfToken((await anon.get('/console/login')).text); // a real token + cookie pair, but no session
    const before = await s.service.deps.database.db.selectFrom('api_keys').select('key_id').where('company_id', '=', companyId).execute();
    for (const [action, form] of forms(ids)) {
      const r = await anon.request('POST', action, { _csrf: token, ...form });
      assert.equal(r.status, 303, action);
      assert.equal(r.location, '/console/login', action);
    }
    const afterKeys = await s.service.deps.database.db.selectFrom('api_keys').select('key_id').where('company_id', '=', companyId).execute();
    assert.equal(afterKeys.length, before.length, 'no key was created');
    assert.ok(await keyIsActive(ids.key), 'the key was not revoked');
  });

  test('a forged or stale session cookie is refused and cleared', async () => {
    const anon = new ConsoleClient(s.url);
    anon.cookies.set('cms_console_session', 'A'.repeat(43));
    const r = await anon.get('/console/segments');
    assert.equal(r.status, 303);
    assert.match(r.headers.getSetCookie().join('\n'), /cms_console_session=;/);
  });

  test('after sign-out the old session cookie no longer works', async () => {
    const companyId = await newCompany(s);
    const c = await signedInClient(s, companyId);
    const stolen = c.cookies.get('cms_console_session');
    assert.ok(stolen);
    const out = await c.submit('/console/segments', '/console/logout', {});
    assert.equal(out.status, 303);
    assert.equal(out.location, '/console/login?done=signed_out');
    const replay = new ConsoleClient(s.url);
    replay.cookies.set('cms_console_session', stolen);
    assert.equal((await replay.get('/console/segments')).status, 303);
  });
});

describe('CSRF', () => {
  test('every form refuses a missing, wrong or foreign token with 403 and changes nothing', async () => {
    const companyId = await newCompany(s);
    const ids = await fixtures(companyId);
    const c = await signedInClient(s, companyId);
    const other = new ConsoleClient(s.url);
    const foreignToken = csrfToken((await other.get('/console/login')).text); // valid, but for another browser's secret
    const ownToken = csrfToken((await c.get('/console/segments')).text);
    for (const [action, form] of forms(ids)) {
      for (const token of [undefined, '', 'x'.repeat(40), foreignToken, ownToken.slice(0, -2) + 'zz']) {
        const body = token === undefined ? form : { _csrf: token, ...form };
        const r = await c.request('POST', action, body);
        assert.equal(r.status, 403, `${action} with token ${token}`);
        assert.match(r.text, /Form expired/);
      }
    }
    // A token in a header instead of the form is no way around it either when it is wrong.
    const r = await c.request('POST', '/console/settings/integrations/credentials', { label: 'x' }, { 'x-csrf-token': foreignToken });
    assert.equal(r.status, 403);
    assert.ok(await keyIsActive(ids.key));
    assert.equal((await c.get('/console/segments')).status, 200, 'still signed in: sign-out was refused too');
    const keys = await s.service.deps.database.db.selectFrom('api_keys').select('key_id').where('company_id', '=', companyId).execute();
    assert.equal(keys.length, 1, 'no key was created');
  });

  test('the sign-in and invitation forms need a token too', async () => {
    const companyId = await newCompany(s);
    const email = await newUser(s, companyId);
    const anon = new ConsoleClient(s.url);
    const r = await anon.request('POST', '/console/login', { email, password: PASSWORD });
    assert.equal(r.status, 403);
    assert.equal(anon.cookies.has('cms_console_session'), false);
    const inv = await invite(s, companyId, freshEmail());
    const p = new URL(inv.invite_url).pathname;
    const a = await anon.request('POST', p, { password: PASSWORD, password_confirm: PASSWORD });
    assert.equal(a.status, 403);
    assert.equal((await anon.get(p)).status, 200, 'the invitation was not used');
  });

  test('the secret cookie is signed: a self-made secret with a matching token is refused', async () => {
    const companyId = await newCompany(s);
    const c = await signedInClient(s, companyId);
    // An attacker who could plant cookies would need the installation's signing key.
    c.cookies.set('cms_console_csrf', 'attackerchosensecret');
    const r = await c.request('POST', '/console/settings/integrations/credentials', { _csrf: 'anything', label: 'x' });
    assert.equal(r.status, 403);
  });

  test('forms must be forms: JSON bodies are refused (415)', async () => {
    const companyId = await newCompany(s);
    const c = await signedInClient(s, companyId);
    const r = await c.request('POST', '/console/settings/integrations/credentials', undefined, { 'content-type': 'application/json' });
    assert.ok(r.status === 415 || r.status === 403, String(r.status));
  });
});

describe('tenant isolation', () => {
  test('a user of company A gets 404 for company B\'s batch, segment and key ids (as for unknown ids)', async () => {
    const a = await newCompany(s, { name: 'Company A' });
    const b = await newCompany(s, { name: 'Company B' });
    const idsB = await fixtures(b);
    const userA = await signedInClient(s, a);
    const foreign = [
      `/console/sends/${idsB.batch}`,
      `/console/sends/${idsB.batch}?phone=4915`,
      `/console/segments/${idsB.segment}`,
      `/console/settings/integrations/credentials/${idsB.key}/revoke`,
    ];
    const unknown = ['/console/sends/00000000-0000-4000-8000-000000000000', '/console/segments/2147483647', '/console/settings/integrations/credentials/2147483647/revoke', '/console/segments/abc', '/console/sends/not-a-uuid'];
    for (const p of [...foreign, ...unknown]) {
      const r = await userA.get(p);
      assert.equal(r.status, 404, p);
      assert.equal(r.text.includes('fixture'), false, p);
      assert.equal(r.text.includes('Company B'), false, p);
    }
    // Revoking B's key from A: 404 and the key keeps working.
    const r = await userA.submit('/console/segments', `/console/settings/integrations/credentials/${idsB.key}/revoke`, {});
    assert.equal(r.status, 404);
    assert.ok(await keyIsActive(idsB.key));
    // A's lists show none of B's data; the phone search does not reach B's messages.
    for (const p of ['/console/settings/integrations/credentials', '/console/segments', '/console/sends', '/console/sends?phone=%2B4915112345678']) {
      const page = await userA.get(p);
      assert.equal(page.status, 200, p);
      assert.equal(page.text.includes('fixture'), false, p);
      assert.equal(page.text.includes(idsB.batch), false, p);
    }
    // B's own user sees them.
    const userB = await signedInClient(s, b);
    assert.equal((await userB.get(`/console/sends/${idsB.batch}`)).status, 200);
    assert.match((await userB.get('/console/sends?phone=%2B4915112345678')).text, new RegExp(idsB.batch.slice(0, 8)));
    assert.equal((await userB.get(`/console/segments/${idsB.segment}`)).status, 200);
  });
});

describe('sign-in', () => {
  test('wrong passwords are throttled per email: the 11th attempt is refused (429) even with the right password', async () => {
    const companyId = await newCompany(s);
    const email = await newUser(s, companyId);
    const c = new ConsoleClient(s.url);
    for (let i = 0; i < 10; i++) {
      const r = await c.submit('/console/login', '/console/login', { email, password: `wrong password ${i}` });
      assert.equal(r.status, 401, `attempt ${i + 1}`);
      assert.match(r.text, /email or the password is wrong/);
    }
    const blocked = await c.submit('/console/login', '/console/login', { email, password: PASSWORD });
    assert.equal(blocked.status, 429);
    assert.match(blocked.text, /Too many failed sign-in attempts/);
    assert.ok(Number(blocked.headers.get('retry-after')) > 0);
    assert.equal(c.cookies.has('cms_console_session'), false);
  });

  test('unknown emails and wrong passwords get the same answer; success clears the count', async () => {
    const companyId = await newCompany(s);
    const email = await newUser(s, companyId);
    const c = new ConsoleClient(s.url);
    const unknown = await c.submit('/console/login', '/console/login', { email: freshEmail('nobody'), password: PASSWORD });
    const wrong = await c.submit('/console/login', '/console/login', { email, password: 'not the password' });
    assert.equal(unknown.status, 401);
    assert.equal(wrong.status, 401);
    for (let i = 0; i < 8; i++) await c.submit('/console/login', '/console/login', { email, password: 'not the password' });
    await c.signIn(email.toUpperCase()); // 9 failures: not blocked yet; emails are case-insensitive
    const fresh = new ConsoleClient(s.url);
    for (let i = 0; i < 9; i++) {
      const r = await fresh.submit('/console/login', '/console/login', { email, password: 'not the password' });
      assert.equal(r.status, 401, 'the count started again after the success');
    }
    const r = await c.get('/console/segments');
    assert.equal(r.status, 200);
  });

  test('the session cookie is httpOnly, SameSite=Lax, scoped to /console, not Secure over http; sign-in rotates it', async () => {
    const companyId = await newCompany(s);
    const email = await newUser(s, companyId);
    const c = new ConsoleClient(s.url);
    c.cookies.set('cms_console_session', 'planted-by-someone-else-0123456789');
    const page = await c.get('/console/login');
    const r = await c.request('POST', '/console/login', { _csrf: csrfToken(page.text), email, password: PASSWORD, next: '//evil.example/' });
    assert.equal(r.status, 303);
    assert.equal(r.location, '/console/', 'next must stay inside the console');
    const setCookie = r.headers.getSetCookie().find((l) => l.startsWith('cms_console_session='));
    assert.ok(setCookie);
    assert.match(setCookie, /; Path=\/console/);
    assert.match(setCookie, /; HttpOnly/);
    assert.match(setCookie, /; SameSite=Lax/);
    assert.doesNotMatch(setCookie, /Secure/);
    assert.notEqual(c.cookies.get('cms_console_session'), 'planted-by-someone-else-0123456789');
  });
});

describe('pages and invitations', () => {
  test('security headers: CSP without inline script, no framing, no referrer, no caching', async () => {
    const r = await new ConsoleClient(s.url).get('/console/login');
    const csp = r.headers.get('content-security-policy') ?? '';
    assert.match(csp, /default-src 'none'/);
    assert.match(csp, /script-src 'self'(;|$)/);
    assert.match(csp, /frame-ancestors 'none'/);
    assert.equal(r.headers.get('referrer-policy'), 'no-referrer');
    assert.equal(r.headers.get('x-content-type-options'), 'nosniff');
    assert.equal(r.headers.get('cache-control'), 'no-store');
    assert.match(r.headers.get('content-type') ?? '', /^text\/html; charset=utf-8/);
    assert.doesNotMatch(r.text, /<script>(?!<\/script>)|<script(?![^>]*src=)/, 'no inline scripts');
    assert.doesNotMatch(r.text, /https?:\/\//, 'no external assets');
  });

  test('an invitation works once; a newer one replaces the older; the public API spec does not list console routes', async () => {
    const companyId = await newCompany(s);
    const email = freshEmail();
    const first = await invite(s, companyId, email);
    const second = await invite(s, companyId, email);
    const anon = new ConsoleClient(s.url);
    assert.equal((await anon.get(new URL(first.invite_url).pathname)).status, 404, 'superseded');
    const p = new URL(second.invite_url).pathname;
    const short = await anon.submit(p, p, { password: 'short', password_confirm: 'short' });
    assert.equal(short.status, 400);
    assert.match(short.text, /at least 10 characters/);
    const differ = await anon.submit(p, p, { password: PASSWORD, password_confirm: PASSWORD + 'x' });
    assert.equal(differ.status, 400);
    const ok = await anon.submit(p, p, { password: PASSWORD, password_confirm: PASSWORD });
    assert.equal(ok.status, 303);
    assert.equal(ok.location, '/console/login?done=joined');
    assert.equal((await anon.get(p)).status, 404, 'used up');
    await s.admin('POST', `/admin/companies/${companyId}/users/invitations`, { email }, 409);
    const spec = await (await fetch(`${s.url}/openapi.json`)).json();
    assert.deepEqual(Object.keys(spec.paths).filter((k) => k.startsWith('/console')), []);
  });

  test('operator API: invitation answer shape and refusals', async () => {
    const companyId = await newCompany(s);
    const inv = await invite(s, companyId, '  Grace.Hopper@Example.COM ');
    assert.deepEqual(Object.keys(inv).sort(), ['company_id', 'email', 'email_sent', 'expires_at', 'invitation_id', 'invite_url', 'role']);
    assert.equal(inv.email, 'grace.hopper@example.com');
    assert.equal(inv.company_id, companyId);
    assert.match(inv.invite_url, new RegExp(`^${s.url}/console/invite/[A-Za-z0-9_-]{43}$`));
    assert.ok(Date.parse(inv.expires_at) > Date.now() + 6 * 24 * 3600_000);
    await s.admin('POST', '/admin/companies/2147483647/users/invitations', { email: 'a@example.com' }, 404);
    const bad = await s.admin('POST', `/admin/companies/${companyId}/users/invitations`, { email: 'not an email' }, 422);
    assert.deepEqual(bad.detail[0].loc, ['body', 'email']);
    await s.admin('POST', `/admin/companies/${companyId}/users/invitations`, {}, 422);
    const noAuth = await fetch(`${s.url}/admin/companies/${companyId}/users/invitations`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"email":"x@example.com"}' });
    assert.equal(noAuth.status, 401);
    const list = await s.admin('GET', `/admin/companies/${companyId}/users`);
    assert.deepEqual(list.invitations.map((i: { email: string }) => i.email), ['grace.hopper@example.com']);
    assert.deepEqual(list.users, []);
  });

  test('password change needs the current password and signs out the other sessions', async () => {
    const companyId = await newCompany(s);
    const email = await newUser(s, companyId);
    const laptop = new ConsoleClient(s.url);
    const phone = new ConsoleClient(s.url);
    await laptop.signIn(email);
    await phone.signIn(email);
    const wrong = await laptop.submit('/console/account/password', '/console/account/password', { current_password: 'nope nope nope', new_password: 'a brand new password', new_password_confirm: 'a brand new password' });
    assert.equal(wrong.status, 400);
    assert.match(wrong.text, /current password is wrong/);
    const ok = await laptop.submit('/console/account/password', '/console/account/password', { current_password: PASSWORD, new_password: 'a brand new password', new_password_confirm: 'a brand new password' });
    assert.equal(ok.status, 303, 'POST-redirect-GET');
    assert.equal(ok.location, '/console/account/password?done=changed');
    assert.match((await laptop.get(ok.location!)).text, /Password changed/);
    assert.equal((await laptop.get('/console/segments')).status, 200, 'this session stays');
    assert.equal((await phone.get('/console/segments')).status, 303, 'the other session ended');
    const again = new ConsoleClient(s.url);
    await again.signIn(email, 'a brand new password');
  });

  test('unknown console paths answer an HTML 404 page', async () => {
    const r = await new ConsoleClient(s.url).get('/console/nope');
    assert.equal(r.status, 404);
    assert.match(r.headers.get('content-type') ?? '', /text\/html/);
    assert.match(r.text, /Page not found/);
  });
});
