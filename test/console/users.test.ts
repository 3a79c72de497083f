/**
 * Company users, invitations, roles, password reset links, sessions and sign-in throttling at the
 * domain level (src/domain/users.ts, src/console/login-throttle.ts), with explicit times: expiry rules
 * that HTTP tests cannot wait for. Then the owner's users pages through the real server:
 * invite with a role (link shown once), revoke, change role, remove, reset link; errors beside
 * the fields with the input kept; the last owner; another company's ids; the audit trail.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import type { Db } from '../../src/db/database.ts';
import { DomainError } from '../../src/domain/errors.ts';
import {
  acceptInvitation, authenticateUser, changeRole, createInvitation, createPasswordReset, createSession, findInvitation, findPasswordReset,
  findSession, hashToken, INVITATION_TTL_MS, normaliseEmail, PASSWORD_RESET_TTL_MS, removeUser, resetPassword, SESSION_IDLE_MS, SESSION_MAX_MS,
  argon2Hashing,
} from '../../src/domain/users.ts';
import { clearLoginFailures, loginBlockedFor, PER_ADDRESS, PER_EMAIL, recordLoginFailure, WINDOW_MS } from '../../src/console/login-throttle.ts';
import { startTestServer, TEST_PASSWORDS, type TestServer } from '../helpers/server.ts';
import { ConsoleClient, csrfToken, freshEmail, newCompany, newUser, PASSWORD, signedInClient, userIdOf, type Role } from './helpers.ts';

let s: TestServer;
let db: Db;
before(async () => {
  s = await startTestServer({ role: 'api' });
  db = s.service.deps.database.db;
});
after(() => s.close());

const T0 = new Date('2030-03-01T12:00:00Z');
const at = (ms: number) => new Date(T0.getTime() + ms);

async function rejects(p: Promise<unknown>, status: number): Promise<void> {
  await assert.rejects(p, (err) => err instanceof DomainError && err.status === status);
}

describe('invitations', () => {
  test('store only the token hash, expire after 7 days, work once', async () => {
    const companyId = await newCompany(s);
    const inv = await createInvitation(db, companyId, { email: freshEmail(), role: 'owner', actor: 'admin' }, T0);
    assert.equal(inv.expires_at.getTime(), T0.getTime() + INVITATION_TTL_MS);
    const row = await db.selectFrom('console_invitations').selectAll().where('invitation_id', '=', inv.invitation_id).executeTakeFirstOrThrow();
    assert.deepEqual(Buffer.from(row.token_hash), hashToken(inv.token));
    const dump = JSON.stringify((await sql`SELECT * FROM console_invitations`.execute(db)).rows);
    assert.equal(dump.includes(inv.token), false, 'the token itself is not stored');

    assert.ok(await findInvitation(db, inv.token, at(INVITATION_TTL_MS - 1)));
    assert.equal(await findInvitation(db, inv.token, at(INVITATION_TTL_MS)), undefined, 'expired');
    await rejects(acceptInvitation(db, TEST_PASSWORDS, inv.token, PASSWORD, at(INVITATION_TTL_MS + 1)), 404);

    // With the service's own hashing (test servers lower its cost: test/helpers/server.ts).
    const user = await acceptInvitation(db, argon2Hashing(), inv.token, PASSWORD, at(1000));
    assert.equal(user.company_id, companyId);
    await rejects(acceptInvitation(db, TEST_PASSWORDS, inv.token, PASSWORD, at(2000)), 404);
    const stored = await db.selectFrom('console_users').select('password_hash').where('user_id', '=', user.user_id).executeTakeFirstOrThrow();
    assert.match(stored.password_hash, /^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
  });

  test('refusals: unknown company 404, bad email 422, existing user 409, weak password 422', async () => {
    const companyId = await newCompany(s);
    await rejects(createInvitation(db, 2_147_483_000, { email: 'a@example.com', role: 'owner', actor: 'admin' }, T0), 404);
    for (const bad of ['', 'no-at-sign', 'a@b', 'a b@example.com', `${'x'.repeat(250)}@example.com`]) await rejects(createInvitation(db, companyId, { email: bad, role: 'owner', actor: 'admin' }, T0), 422);
    const email = freshEmail();
    const inv = await createInvitation(db, companyId, { email, role: 'owner', actor: 'admin' }, T0);
    await rejects(acceptInvitation(db, TEST_PASSWORDS, inv.token, 'short', at(1)), 422);
    await acceptInvitation(db, TEST_PASSWORDS, inv.token, PASSWORD, at(1));
    await rejects(createInvitation(db, companyId, { email: email.toUpperCase(), role: 'owner', actor: 'admin' }, T0), 409);
    const otherCompany = await newCompany(s);
    await rejects(createInvitation(db, otherCompany, { email, role: 'owner', actor: 'admin' }, T0), 409);
  });

  test('two pending links of different companies for one email: the second accepted is refused (409), its link stays unused', async () => {
    const a = await newCompany(s);
    const b = await newCompany(s);
    const email = freshEmail();
    const invA = await createInvitation(db, a, { email, role: 'owner', actor: 'admin' }, T0);
    const invB = await createInvitation(db, b, { email, role: 'owner', actor: 'admin' }, T0);
    await acceptInvitation(db, TEST_PASSWORDS, invA.token, PASSWORD, at(1));
    await rejects(acceptInvitation(db, TEST_PASSWORDS, invB.token, PASSWORD, at(2)), 409);
    assert.ok(await findInvitation(db, invB.token, at(3)), 'the refused acceptance was rolled back');
  });

  test('emails are trimmed and lowercased', () => {
    assert.equal(normaliseEmail('  Ada.Lovelace@Example.COM '), 'ada.lovelace@example.com');
    assert.equal(normaliseEmail('not an email'), undefined);
  });
});

describe('sessions', () => {
  async function user(): Promise<{ user_id: number; email: string }> {
    const companyId = await newCompany(s);
    const inv = await createInvitation(db, companyId, { email: freshEmail(), role: 'owner', actor: 'admin' }, T0);
    return acceptInvitation(db, TEST_PASSWORDS, inv.token, PASSWORD, T0);
  }

  test('authenticateUser: right password only; case-insensitive email', async () => {
    const u = await user();
    assert.equal((await authenticateUser(db, TEST_PASSWORDS, u.email.toUpperCase(), PASSWORD))?.user_id, u.user_id);
    assert.equal(await authenticateUser(db, TEST_PASSWORDS, u.email, PASSWORD + '!'), undefined);
    assert.equal(await authenticateUser(db, TEST_PASSWORDS, freshEmail('ghost'), PASSWORD), undefined);
  });

  test('end after 12 hours idle, are extended by use, and end 7 days after sign-in whatever the use', async () => {
    const u = await user();
    const token = await createSession(db, u.user_id, T0);
    const row = await db.selectFrom('console_sessions').selectAll().where('user_id', '=', u.user_id).executeTakeFirstOrThrow();
    assert.deepEqual(Buffer.from(row.session_hash), hashToken(token), 'only the hash is stored');

    assert.ok(await findSession(db, token, at(SESSION_IDLE_MS - 1000)), 'used just before the idle limit');
    assert.ok(await findSession(db, token, at(2 * SESSION_IDLE_MS - 2000)), 'the use extended it');
    assert.equal(await findSession(db, token, at(3 * SESSION_IDLE_MS)), undefined, 'idle too long');

    const busy = await createSession(db, u.user_id, T0);
    for (let t = 0; t < SESSION_MAX_MS; t += SESSION_IDLE_MS / 2) assert.ok(await findSession(db, busy, at(t)), `in use at ${t}`);
    assert.equal(await findSession(db, busy, at(SESSION_MAX_MS)), undefined, 'absolute limit');
    assert.equal(await findSession(db, 'x'.repeat(43), T0), undefined);
    assert.equal(await findSession(db, undefined, T0), undefined);
  });
});

describe('sign-in throttling', () => {
  test(`${PER_EMAIL} failures block an email for the rest of the ${WINDOW_MS / 60_000}-minute window; success clears them`, async () => {
    const email = freshEmail();
    const address = `198.51.100.${Math.floor(Math.random() * 200)}:${process.pid}`;
    for (let i = 0; i < PER_EMAIL; i++) {
      assert.equal(await loginBlockedFor(db, email, address, at(i)), 0);
      await recordLoginFailure(db, email, address, at(i * 1000));
    }
    assert.equal(await loginBlockedFor(db, email, address, at(10_000)), WINDOW_MS - 10_000);
    assert.equal(await loginBlockedFor(db, email.toUpperCase(), `${address}-other`, at(10_000)), WINDOW_MS - 10_000, 'from any address');
    assert.equal(await loginBlockedFor(db, email, address, at(WINDOW_MS)), 0, 'the window ended');
    await recordLoginFailure(db, email, address, at(WINDOW_MS + 1));
    assert.equal(await loginBlockedFor(db, email, address, at(WINDOW_MS + 2)), 0, 'a new window counts from 1');
    await clearLoginFailures(db, email);
  });

  test(`${PER_ADDRESS} failures from one address block every email from it`, async () => {
    const address = `203.0.113.7:${process.pid}:${Date.now()}`;
    for (let i = 0; i < PER_ADDRESS; i++) await recordLoginFailure(db, freshEmail('spray'), address, at(i));
    assert.ok(await loginBlockedFor(db, freshEmail('victim'), address, at(PER_ADDRESS)) > 0);
    assert.equal(await loginBlockedFor(db, freshEmail('victim'), `${address}-elsewhere`, at(PER_ADDRESS)), 0);
  });
});

describe('roles and password reset links (domain)', () => {
  async function user(role: Role, companyId?: number): Promise<{ user_id: number; email: string; company_id: number }> {
    const company = companyId ?? await newCompany(s);
    const inv = await createInvitation(db, company, { email: freshEmail(role), role, actor: 'admin' }, T0);
    return acceptInvitation(db, TEST_PASSWORDS, inv.token, PASSWORD, T0);
  }

  test('the invitation\'s role is the user\'s and the session\'s, read on every request; unknown roles 422', async () => {
    const u = await user('developer');
    const token = await createSession(db, u.user_id, T0);
    assert.equal((await findSession(db, token, at(1)))?.role, 'developer');
    assert.equal((await changeRole(db, u.user_id, 'marketer', { actor: 'admin' })).previous_role, 'developer');
    assert.equal((await findSession(db, token, at(2)))?.role, 'marketer', 'read on every request');
    await rejects(changeRole(db, u.user_id, 'admin' as Role, { actor: 'admin' }), 422);
  });

  test('another company\'s user is not found (404) when a company is given', async () => {
    const a = await user('owner');
    const other = await newCompany(s);
    await rejects(changeRole(db, a.user_id, 'marketer', { companyId: other, actor: 'admin' }), 404);
    await rejects(removeUser(db, a.user_id, { companyId: other, actor: 'admin' }), 404);
    await rejects(createPasswordReset(db, a.user_id, { companyId: other, actor: 'admin' }, T0), 404);
  });

  test('reset links: only the hash stored, valid one hour, once; a newer one supersedes; the reset ends every session', async () => {
    const u = await user('marketer');
    const session = await createSession(db, u.user_id, T0);
    const first = await createPasswordReset(db, u.user_id, { actor: 'admin' }, T0);
    assert.equal(first.expires_at.getTime(), T0.getTime() + PASSWORD_RESET_TTL_MS);
    const dump = JSON.stringify((await sql`SELECT * FROM console_password_resets`.execute(db)).rows);
    assert.equal(dump.includes(first.token), false, 'the token itself is not stored');
    assert.ok(await findPasswordReset(db, first.token, at(PASSWORD_RESET_TTL_MS - 1)));
    assert.equal(await findPasswordReset(db, first.token, at(PASSWORD_RESET_TTL_MS)), undefined, 'expired');
    const second = await createPasswordReset(db, u.user_id, { actor: 'admin' }, at(10));
    assert.equal(await findPasswordReset(db, first.token, at(11)), undefined, 'superseded');
    await rejects(resetPassword(db, TEST_PASSWORDS, second.token, 'short', at(12)), 422);
    assert.ok(await findPasswordReset(db, second.token, at(13)), 'a refused password leaves the link usable');
    await resetPassword(db, TEST_PASSWORDS, second.token, 'a new and long passphrase', at(14));
    assert.equal(await findSession(db, session, at(15)), undefined, 'sessions ended');
    await rejects(resetPassword(db, TEST_PASSWORDS, second.token, 'a new and long passphrase', at(16)), 404);
    assert.equal((await authenticateUser(db, TEST_PASSWORDS, u.email, 'a new and long passphrase'))?.user_id, u.user_id);
    assert.equal(await authenticateUser(db, TEST_PASSWORDS, u.email, PASSWORD), undefined);
  });

  test('removing a user removes its sessions and reset links', async () => {
    const owner = await user('owner');
    const u = await user('developer', owner.company_id);
    const session = await createSession(db, u.user_id, T0);
    const reset = await createPasswordReset(db, u.user_id, { actor: 'admin' }, T0);
    await removeUser(db, u.user_id, { companyId: owner.company_id, actor: 'admin' });
    assert.equal(await findSession(db, session, at(1)), undefined);
    assert.equal(await findPasswordReset(db, reset.token, at(1)), undefined);
  });
});

// ---------------------------------------------------------------------------------------------------
// The users pages over HTTP

/** The audit entries of a company, newest first, details parsed. */
async function auditOf(companyId: number): Promise<{ actor: string; action: string; target: string; details: any }[]> {
  const res = await s.admin('GET', `/admin/audit?company_id=${companyId}&limit=200`);
  return res.entries.map((e: any) => ({ ...e, details: typeof e.details === 'string' ? JSON.parse(e.details) : e.details }));
}

/** A company with a signed-in owner. */
async function ownerSetup(): Promise<{ companyId: number; owner: ConsoleClient; ownerEmail: string }> {
  const companyId = await newCompany(s);
  const ownerEmail = await newUser(s, companyId, freshEmail('owner'), 'owner');
  const owner = new ConsoleClient(s.url);
  await owner.signIn(ownerEmail);
  return { companyId, owner, ownerEmail };
}

/** The one-time link shown on a page (the Copy field), or undefined. */
function shownLink(text: string): string | undefined {
  return /id="new-link-value" type="text" readonly value="([^"]+)"/.exec(text)?.[1];
}

describe('users pages', () => {
  test('the owner invites a marketer: POST-redirect-GET, link shown once; accepting gives the role; audited', async () => {
    const { companyId, owner, ownerEmail } = await ownerSetup();
    const email = freshEmail('marketer');
    const post = await owner.submit('/console/settings/users', '/console/settings/users/invitations', { email, role: 'marketer' });
    assert.equal(post.status, 303);
    assert.equal(post.location, '/console/settings/users');
    const page = await owner.get('/console/settings/users');
    assert.equal(page.status, 200);
    const link = shownLink(page.text);
    assert.ok(link, 'the link is shown');
    assert.match(link, /\/console\/invite\/[A-Za-z0-9_-]{43}$/);
    assert.equal(shownLink((await owner.get('/console/settings/users')).text), undefined, 'shown only once');
    assert.match(page.text, new RegExp(`data-invitation-id="\\d+"[^]*?${email.replace(/[.]/g, '\\.')}[^]*?marketer`));

    const p = new URL(link).pathname;
    const anon = new ConsoleClient(s.url);
    assert.match((await anon.get(p)).text, /with the role <strong>marketer<\/strong>/);
    assert.equal((await anon.submit(p, p, { password: PASSWORD, password_confirm: PASSWORD })).status, 303);
    const list = await s.admin('GET', `/admin/companies/${companyId}/users`);
    assert.deepEqual(list.users.map((u: any) => u.role).sort(), ['marketer', 'owner']);
    const entries = await auditOf(companyId);
    assert.ok(entries.some((e) => e.action === 'user.invite' && e.actor === `console:${ownerEmail}` && e.details.role === 'marketer'));
    assert.ok(entries.some((e) => e.action === 'user.join' && e.actor === `console:${email}`));
  });

  test('invite errors are shown beside the field with the input kept; nothing written', async () => {
    const { companyId, owner } = await ownerSetup();
    const empty = await owner.submit('/console/settings/users', '/console/settings/users/invitations', { email: '', role: 'developer' });
    assert.equal(empty.status, 422);
    assert.match(empty.text, /<input id="email"[^>]*aria-invalid="true" aria-describedby="email-error">\s*<small id="email-error" class="error" role="alert">Enter the email address/);
    assert.match(empty.text, /id="role-developer" name="role" value="developer" checked/, 'the chosen role is kept');
    const bad = await owner.submit('/console/settings/users', '/console/settings/users/invitations', { email: 'grace at shop', role: 'developer' });
    assert.equal(bad.status, 422);
    assert.match(bad.text, /value="grace at shop"/);
    assert.match(bad.text, /This is not an email address/);
    const noRole = await owner.submit('/console/settings/users', '/console/settings/users/invitations', { email: freshEmail(), role: 'root' });
    assert.equal(noRole.status, 422);
    assert.match(noRole.text, /<small id="role-error" class="error" role="alert">Choose a role/);
    const taken = await newUser(s, await newCompany(s));
    const dup = await owner.submit('/console/settings/users', '/console/settings/users/invitations', { email: taken, role: 'marketer' });
    assert.equal(dup.status, 409);
    assert.match(dup.text, /already has a console account/);
    assert.deepEqual((await s.admin('GET', `/admin/companies/${companyId}/users`)).invitations, []);
  });

  test('revoke an invitation; another company\'s invitation answers 404 and stays', async () => {
    const { companyId, owner } = await ownerSetup();
    const inv = await s.admin('POST', `/admin/companies/${companyId}/users/invitations`, { email: freshEmail(), role: 'developer' }, 201);
    const r = await owner.submit('/console/settings/users', `/console/settings/users/invitations/${inv.invitation_id}/revoke`, {});
    assert.equal(r.status, 303);
    assert.equal(r.location, '/console/settings/users?done=revoked');
    assert.equal((await new ConsoleClient(s.url).get(new URL(inv.invite_url).pathname)).status, 404);
    const other = await newCompany(s);
    const foreign = await s.admin('POST', `/admin/companies/${other}/users/invitations`, { email: freshEmail(), role: 'owner' }, 201);
    const refused = await owner.submit('/console/settings/users', `/console/settings/users/invitations/${foreign.invitation_id}/revoke`, {});
    assert.equal(refused.status, 404);
    assert.equal((await new ConsoleClient(s.url).get(new URL(foreign.invite_url).pathname)).status, 200, 'still valid');
  });

  test('change a role: applies at the user\'s next request; the last owner cannot demote themselves (409 beside the field)', async () => {
    const { companyId, owner, ownerEmail } = await ownerSetup();
    const devEmail = await newUser(s, companyId, freshEmail('dev'), 'developer');
    const dev = new ConsoleClient(s.url);
    await dev.signIn(devEmail);
    assert.equal((await dev.get('/console/settings/integrations/credentials')).status, 200);
    const devId = await userIdOf(s, devEmail);
    const r = await owner.submit(`/console/settings/users/${devId}`, `/console/settings/users/${devId}/role`, { role: 'marketer' });
    assert.equal(r.status, 303);
    assert.equal(r.location, `/console/settings/users/${devId}?done=role`);
    assert.equal((await dev.get('/console/settings/integrations/credentials')).status, 403, 'the open session has the new role');
    const same = await owner.submit(`/console/settings/users/${devId}`, `/console/settings/users/${devId}/role`, { role: 'marketer' });
    assert.equal(same.location, `/console/settings/users/${devId}?done=unchanged`, 'the same role again changes nothing (and is not audited below)');
    const page = await owner.get(`/console/settings/users/${devId}`);
    assert.match(page.text, /Role changed from developer to marketer/, 'history');

    const ownerId = await userIdOf(s, ownerEmail);
    const last = await owner.submit(`/console/settings/users/${ownerId}`, `/console/settings/users/${ownerId}/role`, { role: 'developer' });
    assert.equal(last.status, 409);
    assert.match(last.text, /<small id="role-error" class="error" role="alert">The last owner of a company cannot be given another role/);
    assert.match(last.text, /id="role-developer" name="role" value="developer" checked/, 'the choice is kept');
    const still = await s.admin('GET', `/admin/users?email=${encodeURIComponent(ownerEmail)}`);
    assert.equal(still.users[0].role, 'owner');
    const bad = await owner.submit(`/console/settings/users/${devId}`, `/console/settings/users/${devId}/role`, { role: 'superuser' });
    assert.equal(bad.status, 422);
    const entries = (await auditOf(companyId)).filter((e) => e.action === 'user.role_change');
    assert.deepEqual(entries.map((e) => [e.actor, e.target, e.details.from, e.details.to]), [[`console:${ownerEmail}`, `user:${devId}`, 'developer', 'marketer']]);
  });

  test('an owner who makes another owner and demotes themselves lands on the overview and loses the users page', async () => {
    const { companyId, owner, ownerEmail } = await ownerSetup();
    const otherId = await userIdOf(s, await newUser(s, companyId, freshEmail('dev'), 'developer'));
    assert.equal((await owner.submit(`/console/settings/users/${otherId}`, `/console/settings/users/${otherId}/role`, { role: 'owner' })).status, 303);
    const meId = await userIdOf(s, ownerEmail);
    const r = await owner.submit(`/console/settings/users/${meId}`, `/console/settings/users/${meId}/role`, { role: 'developer' });
    assert.equal(r.status, 303);
    assert.equal(r.location, '/console/overview');
    assert.equal((await owner.get('/console/settings/users')).status, 403);
  });

  test('remove a user: confirmation, their sessions end at once; the last owner cannot remove themselves; removing yourself signs you out', async () => {
    const { companyId, owner, ownerEmail } = await ownerSetup();
    const mEmail = await newUser(s, companyId, freshEmail('m'), 'marketer');
    const marketer = new ConsoleClient(s.url);
    await marketer.signIn(mEmail);
    const mId = await userIdOf(s, mEmail);
    const confirm = await owner.get(`/console/settings/users/${mId}/remove`);
    assert.equal(confirm.status, 200);
    assert.match(confirm.text, /Remove .* signed out at once/s);
    const r = await owner.submit(`/console/settings/users/${mId}/remove`, `/console/settings/users/${mId}/remove`, {});
    assert.equal(r.status, 303);
    assert.equal(r.location, '/console/settings/users?done=removed');
    assert.equal((await marketer.get('/console/overview')).status, 303, 'signed out');
    assert.equal((await owner.get(`/console/settings/users/${mId}`)).status, 404);

    const meId = await userIdOf(s, ownerEmail);
    const last = await owner.submit(`/console/settings/users/${meId}/remove`, `/console/settings/users/${meId}/remove`, {});
    assert.equal(last.status, 409);
    assert.match(last.text, /The last owner of a company cannot be removed/);
    const second = await newUser(s, companyId, freshEmail('o2'), 'owner');
    assert.ok(second);
    const self = await owner.submit(`/console/settings/users/${meId}/remove`, `/console/settings/users/${meId}/remove`, {});
    assert.equal(self.status, 303);
    assert.equal(self.location, '/console/login?done=removed');
    assert.equal((await owner.get('/console/overview')).status, 303);
    const entries = (await auditOf(companyId)).filter((e) => e.action === 'user.remove');
    assert.deepEqual(entries.map((e) => [e.actor, e.target]), [[`console:${ownerEmail}`, `user:${meId}`], [`console:${ownerEmail}`, `user:${mId}`]]);
  });

  test('a reset link from the owner: shown once on the user\'s page; works; audited', async () => {
    const { companyId, owner, ownerEmail } = await ownerSetup();
    const devEmail = await newUser(s, companyId, freshEmail('dev'), 'developer');
    const devId = await userIdOf(s, devEmail);
    const r = await owner.submit(`/console/settings/users/${devId}`, `/console/settings/users/${devId}/reset-link`, {});
    assert.equal(r.status, 303);
    assert.equal(r.location, `/console/settings/users/${devId}`);
    const page = await owner.get(`/console/settings/users/${devId}`);
    const link = shownLink(page.text);
    assert.ok(link);
    assert.match(link, /\/console\/password-reset\/[A-Za-z0-9_-]{43}$/);
    assert.equal(shownLink((await owner.get(`/console/settings/users/${devId}`)).text), undefined, 'once');
    const p = new URL(link).pathname;
    const anon = new ConsoleClient(s.url);
    assert.equal((await anon.submit(p, p, { password: 'reset by the owner ok', password_confirm: 'reset by the owner ok' })).status, 303);
    await new ConsoleClient(s.url).signIn(devEmail, 'reset by the owner ok');
    const entries = await auditOf(companyId);
    assert.ok(entries.some((e) => e.action === 'user.password_reset_link' && e.actor === `console:${ownerEmail}` && e.target === `user:${devId}`));
  });

  test('another company\'s user ids answer 404 on every users page, and nothing changes', async () => {
    const { owner } = await ownerSetup();
    const otherCompany = await newCompany(s);
    const victimEmail = await newUser(s, otherCompany, freshEmail('victim'), 'developer');
    const victim = await userIdOf(s, victimEmail);
    assert.equal((await owner.get(`/console/settings/users/${victim}`)).status, 404);
    assert.equal((await owner.get(`/console/settings/users/${victim}/remove`)).status, 404);
    const token = csrfToken((await owner.get('/console/settings/users')).text);
    for (const [action, form] of [['role', { role: 'owner' }], ['reset-link', {}], ['remove', {}]] as const) {
      const r = await owner.request('POST', `/console/settings/users/${victim}/${action}`, { _csrf: token, ...form });
      assert.equal(r.status, 404, action);
    }
    assert.equal((await owner.get('/console/settings/users/999999999')).status, 404);
    assert.equal((await owner.get('/console/settings/users/abc')).status, 404);
    const still = await s.admin('GET', `/admin/users?email=${encodeURIComponent(victimEmail)}`);
    assert.equal(still.users[0].role, 'developer');
    const audit = await s.admin('GET', `/admin/audit?company_id=${otherCompany}&limit=50`);
    assert.equal(audit.entries.filter((e: any) => e.actor.startsWith('console:') && e.action !== 'user.join' && e.action !== 'console.sign_in').length, 0);
  });

  test('navigation by role: Users for owners only; Credentials and Webhooks not for marketers', async () => {
    const companyId = await newCompany(s);
    const nav = async (role: Role) => {
      const c = await signedInClient(s, companyId, role);
      const text = (await c.get('/console/overview')).text;
      const links = /<ul class="nav-links">([^]*?)<\/ul>/.exec(text)?.[1] ?? '';
      return [...links.matchAll(/<a href="([^"]+)"/g)].map((m) => m[1]);
    };
    const owner = await nav('owner');
    const developer = await nav('developer');
    const marketer = await nav('marketer');
    assert.ok(owner.includes('/console/settings/users') && owner.includes('/console/settings/integrations/credentials'));
    assert.ok(!developer.includes('/console/settings/users') && developer.includes('/console/settings/integrations/webhooks'));
    assert.ok(!marketer.includes('/console/settings/users'));
    assert.ok(!marketer.includes('/console/settings/integrations/credentials') && !marketer.includes('/console/settings/integrations/webhooks'));
    for (const entry of ['/console/automations', '/console/campaigns', '/console/segments', '/console/contacts', '/console/sends', '/console/account/password']) {
      assert.ok(marketer.includes(entry) && developer.includes(entry), entry);
    }
  });

  test('pages a role may only read say so (developer on Campaigns and Contacts); others do not', async () => {
    const companyId = await newCompany(s);
    const developer = await signedInClient(s, companyId, 'developer');
    const marketer = await signedInClient(s, companyId, 'marketer');
    for (const p of ['/console/campaigns', '/console/contacts']) {
      assert.match((await developer.get(p)).text, /role="note">Read only: your role \(developer\)/, p);
      assert.doesNotMatch((await marketer.get(p)).text, /Read only:/, p);
    }
    assert.doesNotMatch((await developer.get('/console/settings/integrations/credentials')).text, /Read only:/);
  });

  test('a refused role gets the 403 page that says so, and the change is not made', async () => {
    const companyId = await newCompany(s);
    const marketer = await signedInClient(s, companyId, 'marketer');
    const page = await marketer.get('/console/settings/integrations/credentials');
    assert.equal(page.status, 403);
    assert.match(page.text, /<h1>Not allowed<\/h1>/);
    assert.match(page.text, /Your role is marketer/);
    const token = csrfToken((await marketer.get('/console/overview')).text);
    const post = await marketer.request('POST', '/console/settings/integrations/credentials', { _csrf: token, label: 'sneaky' });
    assert.equal(post.status, 403);
    assert.match(post.text, /Nothing was changed/);
    const keys = await s.admin('GET', `/admin/companies/${companyId}/api-keys`);
    assert.deepEqual(keys.keys, [], 'no key was created');
  });
});
