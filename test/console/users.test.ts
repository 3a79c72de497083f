/**
 * Company users, invitations, sessions and sign-in throttling at the domain level (src/domain/users.ts,
 * src/console/login-throttle.ts), with explicit times: expiry rules that HTTP tests cannot wait for.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import type { Db } from '../../src/db/database.ts';
import { DomainError } from '../../src/domain/errors.ts';
import {
  acceptInvitation, authenticateUser, createInvitation, createSession, findInvitation, findSession, hashToken,
  INVITATION_TTL_MS, normaliseEmail, SESSION_IDLE_MS, SESSION_MAX_MS,
} from '../../src/domain/users.ts';
import { clearLoginFailures, loginBlockedFor, PER_ADDRESS, PER_EMAIL, recordLoginFailure, WINDOW_MS } from '../../src/console/login-throttle.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { freshEmail, newCompany, PASSWORD } from './helpers.ts';

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
    await rejects(acceptInvitation(db, inv.token, PASSWORD, at(INVITATION_TTL_MS + 1)), 404);

    const user = await acceptInvitation(db, inv.token, PASSWORD, at(1000));
    assert.equal(user.company_id, companyId);
    await rejects(acceptInvitation(db, inv.token, PASSWORD, at(2000)), 404);
    const stored = await db.selectFrom('console_users').select('password_hash').where('user_id', '=', user.user_id).executeTakeFirstOrThrow();
    assert.match(stored.password_hash, /^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
  });

  test('refusals: unknown company 404, bad email 422, existing user 409, weak password 422', async () => {
    const companyId = await newCompany(s);
    await rejects(createInvitation(db, 2_147_483_000, { email: 'a@example.com', role: 'owner', actor: 'admin' }, T0), 404);
    for (const bad of ['', 'no-at-sign', 'a@b', 'a b@example.com', `${'x'.repeat(250)}@example.com`]) await rejects(createInvitation(db, companyId, { email: bad, role: 'owner', actor: 'admin' }, T0), 422);
    const email = freshEmail();
    const inv = await createInvitation(db, companyId, { email, role: 'owner', actor: 'admin' }, T0);
    await rejects(acceptInvitation(db, inv.token, 'short', at(1)), 422);
    await acceptInvitation(db, inv.token, PASSWORD, at(1));
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
    await acceptInvitation(db, invA.token, PASSWORD, at(1));
    await rejects(acceptInvitation(db, invB.token, PASSWORD, at(2)), 409);
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
    return acceptInvitation(db, inv.token, PASSWORD, T0);
  }

  test('authenticateUser: right password only; case-insensitive email', async () => {
    const u = await user();
    assert.equal((await authenticateUser(db, u.email.toUpperCase(), PASSWORD))?.user_id, u.user_id);
    assert.equal(await authenticateUser(db, u.email, PASSWORD + '!'), undefined);
    assert.equal(await authenticateUser(db, freshEmail('ghost'), PASSWORD), undefined);
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
