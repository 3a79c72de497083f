/**
 * Shared domain commands (src/domain/actor.ts) record who ran them: the same command called with the
 * operator actor and with a console user's actor writes `admin` and `console:<email>` into the audit
 * log, with the same action, target and company; a console actor cannot reach another company's key
 * or invitation (404 like an unknown one). In-process, through the commands the admin API and the
 * console both call.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Db } from '../../src/db/database.ts';
import { consoleActor, OPERATOR } from '../../src/domain/actor.ts';
import { createApiKey, revokeApiKey } from '../../src/domain/api-keys.ts';
import { createCompany } from '../../src/domain/companies.ts';
import { DomainError } from '../../src/domain/errors.ts';
import { inviteUser, revokeUserInvitation } from '../../src/domain/users.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { freshEmail } from './helpers.ts';

let s: TestServer;
let db: Db;
before(async () => {
  s = await startTestServer({ role: 'api' });
  db = s.service.deps.database.db;
});
after(() => s.close());

async function entry(action: string, target: string) {
  return db.selectFrom('audit_log').select(['actor', 'action', 'target', 'company_id', 'details'])
    .where('action', '=', action).where('target', '=', target).orderBy('entry_id').execute();
}

const is404 = (err: unknown) => err instanceof DomainError && err.status === 404;

test('key create and revoke: the operator is `admin`, a console user `console:<email>`', async () => {
  const company = await createCompany(db, OPERATOR, { name: 'Actor Co' });
  const other = await createCompany(db, OPERATOR, { name: 'Other Co' });
  assert.deepEqual((await entry('company.create', `company:${company.company_id}`)).map((e) => e.actor), ['admin']);
  const email = freshEmail('owner');
  const owner = consoleActor({ email, company_id: company.company_id, user_id: 1 });

  const byAdmin = await createApiKey(db, OPERATOR, company.company_id, 'by admin');
  const byConsole = await createApiKey(db, owner, company.company_id, 'by console');
  const [a] = await entry('key.create', `key:${byAdmin.key_id}`);
  const [c] = await entry('key.create', `key:${byConsole.key_id}`);
  assert.deepEqual(a, { actor: 'admin', action: 'key.create', target: `key:${byAdmin.key_id}`, company_id: company.company_id, details: { label: 'by admin', prefix: byAdmin.prefix } });
  assert.deepEqual(c, { actor: `console:${email}`, action: 'key.create', target: `key:${byConsole.key_id}`, company_id: company.company_id, details: { label: 'by console', prefix: byConsole.prefix } });

  await revokeApiKey(db, s.service.deps.auth, OPERATOR, byConsole.key_id);
  await revokeApiKey(db, s.service.deps.auth, owner, byAdmin.key_id);
  assert.deepEqual((await entry('key.revoke', `key:${byConsole.key_id}`)).map((e) => [e.actor, e.company_id]), [['admin', company.company_id]]);
  assert.deepEqual((await entry('key.revoke', `key:${byAdmin.key_id}`)).map((e) => [e.actor, e.company_id]), [[`console:${email}`, company.company_id]]);

  // A console user of the company reaches neither another company's key nor its company.
  const foreign = await createApiKey(db, OPERATOR, other.company_id, null);
  await assert.rejects(revokeApiKey(db, s.service.deps.auth, owner, foreign.key_id), is404);
  await assert.rejects(createApiKey(db, owner, other.company_id, null), is404);
  assert.deepEqual(await entry('key.revoke', `key:${foreign.key_id}`), []);
});

test('invitations: the same command audits `admin` or `console:<email>`, and scopes the console actor', async () => {
  const company = await createCompany(db, OPERATOR, { name: 'Invite Co' });
  const other = await createCompany(db, OPERATOR, { name: 'Invite Other Co' });
  const email = freshEmail('owner');
  const owner = consoleActor({ email, company_id: company.company_id, user_id: 1 });
  const now = new Date();

  const byAdmin = await inviteUser(db, OPERATOR, company.company_id, { email: freshEmail('a'), role: 'marketer' }, now);
  const byConsole = await inviteUser(db, owner, company.company_id, { email: freshEmail('c'), role: 'developer' }, now);
  assert.deepEqual((await entry('user.invite', `invitation:${byAdmin.invitation_id}`)).map((e) => e.actor), ['admin']);
  assert.deepEqual((await entry('user.invite', `invitation:${byConsole.invitation_id}`)).map((e) => e.actor), [`console:${email}`]);
  const invitedBy = await db.selectFrom('console_invitations').select(['invitation_id', 'invited_by'])
    .where('invitation_id', 'in', [byAdmin.invitation_id, byConsole.invitation_id]).orderBy('invitation_id').execute();
  assert.deepEqual(invitedBy.map((r) => r.invited_by), ['admin', `console:${email}`]);

  await revokeUserInvitation(db, owner, byAdmin.invitation_id, now);
  await revokeUserInvitation(db, OPERATOR, byConsole.invitation_id, now);
  assert.deepEqual((await entry('user.invitation_revoke', `invitation:${byAdmin.invitation_id}`)).map((e) => e.actor), [`console:${email}`]);
  assert.deepEqual((await entry('user.invitation_revoke', `invitation:${byConsole.invitation_id}`)).map((e) => e.actor), ['admin']);

  const foreign = await inviteUser(db, OPERATOR, other.company_id, { email: freshEmail('f'), role: 'owner' }, now);
  await assert.rejects(revokeUserInvitation(db, owner, foreign.invitation_id, now), is404);
  await assert.rejects(inviteUser(db, owner, other.company_id, { email: freshEmail('x'), role: 'owner' }, now), is404);
});
