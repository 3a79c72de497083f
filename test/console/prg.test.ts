/**
 * POST-redirect-GET in the console: reloading the page after
 * **Create API key** must not create a second key. Every console form that changes something answers
 * `303`; the new key is shown once through a one-time flash (a sealed cookie bound to the session and
 * its company, 5 minutes of the service's clock, cleared by the first GET). A form refused for bad
 * input shows the form again (4xx) and changes nothing. Real server and database, HTTP client that
 * keeps cookies and does not follow redirects; the browser test (test/console/console.browser.test.ts) reloads
 * the page in Chromium.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock, startTestServer, type TestServer } from '../helpers/server.ts';
import { ConsoleClient, newCompany, newUser, PASSWORD, signedInClient } from './helpers.ts';

const CREDENTIALS = '/console/settings/integrations/credentials';
/** The new-key box (the list shows only prefixes). */
const NEW_KEY = /Your new API key|value="cms_live_/;
const clock = new FakeClock(Date.now());
let s: TestServer;
before(async () => { s = await startTestServer({ clock, role: 'api' }); });
after(() => s.close());

async function keyCount(companyId: number): Promise<number> {
  return (await s.admin('GET', `/admin/companies/${companyId}/api-keys`)).keys.length;
}

test('Create API key: 303, the key shown once by the GET, a reload creates and shows nothing', async () => {
  const companyId = await newCompany(s);
  const c = await signedInClient(s, companyId);
  const posted = await c.submit(CREDENTIALS, CREDENTIALS, { label: 'prg' });
  assert.equal(posted.status, 303);
  assert.equal(posted.location, CREDENTIALS);
  assert.equal(posted.text, '');
  assert.ok(!posted.text.includes('cms_live_'));
  const cookie = posted.headers.get('set-cookie') ?? '';
  assert.match(cookie, /cms_console_new_key=v1\./);
  assert.match(cookie, /Path=\/console\/settings\/integrations\/credentials/);
  assert.match(cookie, /HttpOnly/);
  assert.match(cookie, /SameSite=Strict/);
  assert.ok(!cookie.includes('cms_live_'), 'the cookie holds the key sealed, not in clear');

  const shown = await c.get(posted.location!);
  assert.equal(shown.status, 200);
  assert.equal(shown.headers.get('cache-control'), 'no-store');
  const key = /value="(cms_live_[A-Za-z0-9]+)"/.exec(shown.text)?.[1];
  assert.ok(key, 'the new key is on the page');
  assert.match(shown.text, /Your new API key/);
  assert.equal((await s.api('/api/segments/create', { key, body: { name: 'works' } })).status, 200);

  const reload = await c.get(CREDENTIALS);
  assert.equal(reload.status, 200);
  assert.ok(!reload.text.includes(key), 'shown once');
  assert.doesNotMatch(reload.text, /Your new API key/);
  assert.equal(await keyCount(companyId), 1, 'no second key');
});

test('the flash is bound to its session and company, and expires after 5 minutes', async () => {
  const companyA = await newCompany(s);
  const a = await signedInClient(s, companyA);
  const posted = await a.submit(CREDENTIALS, CREDENTIALS, { label: 'stolen' });
  const sealed = /cms_console_new_key=([^;]+)/.exec(posted.headers.get('set-cookie') ?? '')![1];

  // Another user of another company presenting the cookie sees nothing.
  const b = await signedInClient(s, await newCompany(s));
  b.cookies.set('cms_console_new_key', sealed);
  const other = await b.get(CREDENTIALS);
  assert.doesNotMatch(other.text, NEW_KEY);
  // Another session of the same user neither.
  const email = await newUser(s, companyA);
  const second = new ConsoleClient(s.url);
  await second.signIn(email);
  second.cookies.set('cms_console_new_key', sealed);
  assert.doesNotMatch((await second.get(CREDENTIALS)).text, NEW_KEY);
  // A tampered cookie is ignored, not a 500.
  a.cookies.set('cms_console_new_key', sealed.slice(0, -4) + 'AAAA');
  const tampered = await a.get(CREDENTIALS);
  assert.equal(tampered.status, 200);
  assert.doesNotMatch(tampered.text, NEW_KEY);

  // Expiry: the service's clock moves 6 minutes between the POST and its GET.
  const late = await a.submit(CREDENTIALS, CREDENTIALS, { label: 'late' });
  assert.equal(late.status, 303);
  clock.advance(6 * 60_000);
  assert.doesNotMatch((await a.get(CREDENTIALS)).text, NEW_KEY);
  assert.equal(await keyCount(companyA), 2, 'both keys exist; only their display was refused');
});

test('bad input shows the form again and creates nothing', async () => {
  const companyId = await newCompany(s);
  const c = await signedInClient(s, companyId);
  const long = await c.submit(CREDENTIALS, CREDENTIALS, { label: 'x'.repeat(256) });
  assert.equal(long.status, 400);
  assert.match(long.text, /at most 255 characters/);
  assert.equal(await keyCount(companyId), 0);
});

test('password change: 303 to ?done=changed, whose GET shows the notice; a reload changes nothing', async () => {
  const companyId = await newCompany(s);
  const email = await newUser(s, companyId);
  const c = new ConsoleClient(s.url);
  await c.signIn(email);
  const p = '/console/account/password';
  const ok = await c.submit(p, p, { current_password: PASSWORD, new_password: 'another long password', new_password_confirm: 'another long password' });
  assert.equal(ok.status, 303);
  assert.equal(ok.location, `${p}?done=changed`);
  const page = await c.get(ok.location!);
  assert.equal(page.status, 200);
  assert.match(page.text, /Password changed/);
  const fresh = new ConsoleClient(s.url);
  await fresh.signIn(email, 'another long password');
});

test('the other console forms already answer 303 on success (revoke, invitation, sign-in)', async () => {
  const companyId = await newCompany(s);
  const c = await signedInClient(s, companyId);
  const key = await s.admin('POST', `/admin/companies/${companyId}/api-keys`, { label: 'to revoke' });
  const revokePath = `${CREDENTIALS}/${key.key_id}/revoke`;
  const revoked = await c.submit(revokePath, revokePath, {});
  assert.equal(revoked.status, 303);
  assert.equal(revoked.location, `${CREDENTIALS}?done=revoked`);
  const inv = await s.admin('POST', `/admin/companies/${companyId}/users/invitations`, { email: `prg-${Date.now()}@example.com` }, 201);
  const invitePath = new URL(inv.invite_url).pathname;
  const accepted = await new ConsoleClient(s.url).submit(invitePath, invitePath, { password: PASSWORD, password_confirm: PASSWORD });
  assert.equal(accepted.status, 303);
  const login = await new ConsoleClient(s.url).submit('/console/login', '/console/login', { email: inv.email, password: PASSWORD });
  assert.equal(login.status, 303);
});
