/**
 * Operator API of console users and roles (src/http/admin/users.ts): invitations with
 * a role, listing, lookup by email, role changes, removal, password reset links, revoking invitations;
 * the last-owner rule; every change in the audit log with actor `admin`; refusals with their
 * documented status and body, nothing changed.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ADMIN_TOKEN, startTestServer, type TestServer } from '../helpers/server.ts';
import { ConsoleClient, freshEmail, newCompany, PASSWORD } from '../console/helpers.ts';

let s: TestServer;
before(async () => { s = await startTestServer({ role: 'api' }); });
after(() => s.close());

type Role = 'owner' | 'developer' | 'marketer';

/** Invites `email` with `role` through the operator API and accepts over HTTP; resolves to the user's id. */
async function member(companyId: number, role: Role, email = freshEmail(role)): Promise<{ user_id: number; email: string }> {
  const inv = await s.admin('POST', `/admin/companies/${companyId}/users/invitations`, { email, role }, 201);
  const p = new URL(inv.invite_url).pathname;
  const r = await new ConsoleClient(s.url).submit(p, p, { password: PASSWORD, password_confirm: PASSWORD });
  assert.equal(r.status, 303);
  const found = await s.admin('GET', `/admin/users?email=${encodeURIComponent(email)}`);
  return { user_id: found.users[0].user_id, email };
}

async function raw(method: string, path: string, body?: unknown): Promise<{ status: number; json: any }> {
  const res = await fetch(s.url + path, {
    method,
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : undefined };
}

async function audit(companyId: number): Promise<{ actor: string; action: string; target: string; details: any }[]> {
  const res = await s.admin('GET', `/admin/audit?company_id=${companyId}&limit=100`);
  return (res.entries ?? res).map((e: any) => ({ ...e, details: typeof e.details === 'string' ? JSON.parse(e.details) : e.details }));
}

describe('invitations', () => {
  test('with a role: the answer names it, the list shows it, the accepted user has it; default owner', async () => {
    const companyId = await newCompany(s);
    const inv = await s.admin('POST', `/admin/companies/${companyId}/users/invitations`, { email: ' Grace@Shop.Example ', role: 'developer' }, 201);
    assert.deepEqual(Object.keys(inv).sort(), ['company_id', 'email', 'email_sent', 'expires_at', 'invitation_id', 'invite_url', 'role']);
    assert.equal(inv.email_sent, false, 'no SMTP_URL: nothing emailed');
    assert.equal(inv.role, 'developer');
    assert.equal(inv.email, 'grace@shop.example');
    const list = await s.admin('GET', `/admin/companies/${companyId}/users`);
    assert.deepEqual(list.invitations.map((i: any) => [i.email, i.role, i.invited_by]), [['grace@shop.example', 'developer', 'admin']]);
    const plain = await s.admin('POST', `/admin/companies/${companyId}/users/invitations`, { email: freshEmail('plain') }, 201);
    assert.equal(plain.role, 'owner', 'role defaults to owner');
    const m = await member(companyId, 'marketer');
    const after = await s.admin('GET', `/admin/companies/${companyId}/users`);
    assert.deepEqual(after.users.map((u: any) => [u.user_id, u.role, u.company_id]), [[m.user_id, 'marketer', companyId]]);
    assert.deepEqual(Object.keys(after.users[0]).sort(), ['company_id', 'created_at', 'email', 'role', 'user_id']);
  });

  test('refusals: bad role / email 422, unknown company 404, existing user 409; nothing written', async () => {
    const companyId = await newCompany(s);
    const badRole = await raw('POST', `/admin/companies/${companyId}/users/invitations`, { email: freshEmail(), role: 'admin' });
    assert.equal(badRole.status, 422);
    assert.deepEqual(badRole.json.detail.map((d: any) => d.loc), [['body', 'role']]);
    const badEmail = await raw('POST', `/admin/companies/${companyId}/users/invitations`, { email: 'grace at shop' });
    assert.equal(badEmail.status, 422);
    assert.deepEqual(badEmail.json.detail[0].loc, ['body', 'email']);
    assert.equal(badEmail.json.detail[0].type, 'value_error');
    assert.equal((await raw('POST', '/admin/companies/2147483000/users/invitations', { email: freshEmail() })).status, 404);
    const m = await member(companyId, 'developer');
    const dup = await raw('POST', `/admin/companies/${companyId}/users/invitations`, { email: m.email.toUpperCase(), role: 'owner' });
    assert.deepEqual(dup, { status: 409, json: { detail: 'A console user with this email already exists' } });
    const list = await s.admin('GET', `/admin/companies/${companyId}/users`);
    assert.deepEqual(list.invitations, [], 'no invitation was written by the refusals');
  });

  test('revoke: the link stops working; again, unknown or used: 404', async () => {
    const companyId = await newCompany(s);
    const inv = await s.admin('POST', `/admin/companies/${companyId}/users/invitations`, { email: freshEmail(), role: 'marketer' }, 201);
    assert.equal((await raw('DELETE', `/admin/invitations/${inv.invitation_id}`)).status, 204);
    assert.equal((await new ConsoleClient(s.url).get(new URL(inv.invite_url).pathname)).status, 404);
    assert.deepEqual(await raw('DELETE', `/admin/invitations/${inv.invitation_id}`), { status: 404, json: { detail: 'Invitation not found' } });
    assert.equal((await raw('DELETE', '/admin/invitations/2147483000')).status, 404);
    assert.equal((await raw('DELETE', '/admin/invitations/abc')).status, 422);
    const entries = await audit(companyId);
    assert.ok(entries.some((e) => e.action === 'user.invitation_revoke' && e.actor === 'admin' && e.target === `invitation:${inv.invitation_id}`));
  });
});

describe('users', () => {
  test('lookup by email: one or none, case-insensitive; email required', async () => {
    const companyId = await newCompany(s);
    const m = await member(companyId, 'developer');
    const found = await s.admin('GET', `/admin/users?email=${encodeURIComponent(` ${m.email.toUpperCase()} `)}`);
    assert.deepEqual(found.users.map((u: any) => [u.user_id, u.company_id, u.role]), [[m.user_id, companyId, 'developer']]);
    assert.deepEqual(await s.admin('GET', `/admin/users?email=${encodeURIComponent(freshEmail('ghost'))}`), { users: [] });
    assert.deepEqual(await s.admin('GET', '/admin/users?email=not-an-email'), { users: [] });
    assert.equal((await raw('GET', '/admin/users')).status, 422);
  });

  test('role change applies to the next request of an open session; unchanged role is not audited', async () => {
    const companyId = await newCompany(s);
    await member(companyId, 'owner');
    const m = await member(companyId, 'marketer');
    const browser = new ConsoleClient(s.url);
    await browser.signIn(m.email);
    assert.equal((await browser.get('/console/settings/integrations/credentials')).status, 403);
    const changed = await s.admin('PATCH', `/admin/users/${m.user_id}`, { role: 'developer' });
    assert.deepEqual([changed.user_id, changed.role, changed.email], [m.user_id, 'developer', m.email]);
    assert.equal((await browser.get('/console/settings/integrations/credentials')).status, 200, 'the same session, new role');
    await s.admin('PATCH', `/admin/users/${m.user_id}`, { role: 'developer' });
    const entries = (await audit(companyId)).filter((e) => e.action === 'user.role_change');
    assert.equal(entries.length, 1);
    assert.deepEqual([entries[0].actor, entries[0].target, entries[0].details.from, entries[0].details.to], ['admin', `user:${m.user_id}`, 'marketer', 'developer']);
  });

  test('the last owner can be neither demoted nor removed (409, nothing changed); with two owners one can go', async () => {
    const companyId = await newCompany(s);
    const a = await member(companyId, 'owner');
    const demote = await raw('PATCH', `/admin/users/${a.user_id}`, { role: 'marketer' });
    assert.deepEqual(demote, { status: 409, json: { detail: 'The last owner of a company cannot be given another role: make someone else an owner first' } });
    const remove = await raw('DELETE', `/admin/users/${a.user_id}`);
    assert.deepEqual(remove, { status: 409, json: { detail: 'The last owner of a company cannot be removed: make someone else an owner first' } });
    assert.equal((await s.admin('GET', `/admin/users?email=${encodeURIComponent(a.email)}`)).users[0].role, 'owner');
    const b = await member(companyId, 'developer');
    await s.admin('PATCH', `/admin/users/${b.user_id}`, { role: 'owner' });
    await s.admin('PATCH', `/admin/users/${a.user_id}`, { role: 'marketer' });
    assert.equal((await raw('DELETE', `/admin/users/${b.user_id}`)).status, 409, 'b is now the last owner');
  });

  test('two owners demoting each other at once: exactly one succeeds', async () => {
    const companyId = await newCompany(s);
    const a = await member(companyId, 'owner');
    const b = await member(companyId, 'owner');
    const answers = await Promise.all([
      raw('PATCH', `/admin/users/${a.user_id}`, { role: 'developer' }),
      raw('PATCH', `/admin/users/${b.user_id}`, { role: 'developer' }),
    ]);
    assert.deepEqual(answers.map((x) => x.status).sort(), [200, 409]);
    const list = await s.admin('GET', `/admin/companies/${companyId}/users`);
    assert.equal(list.users.filter((u: any) => u.role === 'owner').length, 1);
  });

  test('removal ends the sessions at once and is audited; again 404', async () => {
    const companyId = await newCompany(s);
    await member(companyId, 'owner');
    const m = await member(companyId, 'developer');
    const browser = new ConsoleClient(s.url);
    await browser.signIn(m.email);
    assert.equal((await browser.get('/console/overview')).status, 200);
    assert.equal((await raw('DELETE', `/admin/users/${m.user_id}`)).status, 204);
    const after = await browser.get('/console/overview');
    assert.equal(after.status, 303);
    assert.match(after.location ?? '', /^\/console\/login/);
    assert.deepEqual(await raw('DELETE', `/admin/users/${m.user_id}`), { status: 404, json: { detail: 'User not found' } });
    assert.deepEqual(await raw('PATCH', `/admin/users/${m.user_id}`, { role: 'owner' }), { status: 404, json: { detail: 'User not found' } });
    const entry = (await audit(companyId)).find((e) => e.action === 'user.remove');
    assert.deepEqual([entry?.actor, entry?.target, entry?.details.email, entry?.details.role], ['admin', `user:${m.user_id}`, m.email, 'developer']);
  });

  test('bad ids and bodies: 422 in the list shape, unknown ids 404', async () => {
    assert.equal((await raw('PATCH', '/admin/users/0', { role: 'owner' })).status, 422);
    assert.equal((await raw('PATCH', '/admin/users/x', { role: 'owner' })).status, 422);
    const noRole = await raw('PATCH', '/admin/users/5', {});
    assert.equal(noRole.status, 422);
    assert.deepEqual(noRole.json.detail[0], { type: 'missing', loc: ['body', 'role'], msg: 'Field required' });
    assert.equal((await raw('PATCH', '/admin/users/2147483000', { role: 'owner' })).status, 404);
    assert.equal((await raw('POST', '/admin/users/2147483000/password-resets')).status, 404);
    assert.equal((await raw('GET', '/admin/companies/2147483000/users')).status, 404);
    const noAuth = await fetch(`${s.url}/admin/users/1`, { method: 'DELETE' });
    assert.equal(noAuth.status, 401);
  });
});

describe('password reset links', () => {
  test('one-time, valid 1 hour, a newer one replaces it; using it sets the password and ends every session', async () => {
    const companyId = await newCompany(s);
    const m = await member(companyId, 'marketer');
    const browser = new ConsoleClient(s.url);
    await browser.signIn(m.email);
    const first = await s.admin('POST', `/admin/users/${m.user_id}/password-resets`, undefined, 201);
    assert.deepEqual(Object.keys(first).sort(), ['company_id', 'email', 'email_sent', 'expires_at', 'reset_url', 'user_id']);
    assert.match(first.reset_url, new RegExp(`^${s.url}/console/password-reset/[A-Za-z0-9_-]{43}$`));
    const ttl = Date.parse(first.expires_at) - Date.now();
    assert.ok(ttl > 59 * 60_000 && ttl <= 60 * 60_000 + 5_000, `expires in about an hour (${ttl} ms)`);
    assert.equal((await browser.get('/console/overview')).status, 200, 'making a link changes nothing yet');
    const second = await s.admin('POST', `/admin/users/${m.user_id}/password-resets`, undefined, 201);
    const anon = new ConsoleClient(s.url);
    assert.equal((await anon.get(new URL(first.reset_url).pathname)).status, 404, 'superseded');
    const p = new URL(second.reset_url).pathname;
    const done = await anon.submit(p, p, { password: 'a whole new passphrase', password_confirm: 'a whole new passphrase' });
    assert.equal(done.status, 303);
    assert.equal((await browser.get('/console/overview')).status, 303, 'the old session ended');
    await assert.rejects(new ConsoleClient(s.url).signIn(m.email), /sign-in failed/);
    await new ConsoleClient(s.url).signIn(m.email, 'a whole new passphrase');
    const entries = await audit(companyId);
    assert.equal(entries.filter((e) => e.action === 'user.password_reset_link' && e.actor === 'admin').length, 2);
    assert.ok(entries.some((e) => e.action === 'user.password_reset' && e.actor === `console:${m.email}`));
  });
});
