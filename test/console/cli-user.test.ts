/**
 * `cms user invite|list|role|remove|reset-link|revoke-invitation` (src/cli/commands/user.ts) against
 * the real service: the real `bin/cms.js` in a child process (asynchronously, so the server in this
 * process keeps answering), with its exit codes.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { cliFor, type CliResult } from '../cli/helpers.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { ConsoleClient, freshEmail, newCompany, PASSWORD } from './helpers.ts';

let s: TestServer;
before(async () => { s = await startTestServer({ role: 'api' }); });
after(() => s.close());

/** Runs `cms <args>` against the test server (the shared CLI helper); resolves whatever the exit code. */
function cms(args: string[]): Promise<CliResult> {
  return cliFor(s)(args);
}

/** Runs and expects exit code 0; resolves to stdout. */
async function ok(args: string[]): Promise<string> {
  const r = await cms(args);
  assert.equal(r.code, 0, `cms ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}

/** Accepts an invitation link over HTTP with the test password. */
async function accept(url: string): Promise<void> {
  const p = new URL(url).pathname;
  assert.equal((await new ConsoleClient(s.url).submit(p, p, { password: PASSWORD, password_confirm: PASSWORD })).status, 303);
}

describe('cms user', () => {
  test('invite prints the one-time link on its own line; the link lets the person join with the role and sign in', async () => {
    const companyId = await newCompany(s);
    const email = freshEmail('cli');
    const out = await ok(['user', 'invite', '--company', String(companyId), '--email', email, '--role', 'marketer']);
    const m = /^ {2}(http:\/\/\S+\/console\/invite\/[A-Za-z0-9_-]{43})$/m.exec(out);
    assert.ok(m, out);
    assert.match(out, /works once/);
    assert.match(out, /join as marketer/);
    await accept(m[1]);
    const c = new ConsoleClient(s.url);
    await c.signIn(email);
    assert.equal((await c.get('/console/settings/integrations/credentials')).status, 403, 'a marketer');
  });

  test('--json prints the answer; list shows users with roles and pending invitations', async () => {
    const companyId = await newCompany(s);
    const email = freshEmail('cli');
    const inv = JSON.parse(await ok(['user', 'invite', '--company', String(companyId), '--email', email, '--json']));
    assert.deepEqual(Object.keys(inv).sort(), ['company_id', 'email', 'email_sent', 'expires_at', 'invitation_id', 'invite_url', 'role']);
    assert.equal(inv.role, 'owner', 'default role');
    const list = JSON.parse(await ok(['user', 'list', '--company', String(companyId), '--json']));
    assert.deepEqual(list.invitations.map((i: { email: string; role: string }) => [i.email, i.role]), [[email, 'owner']]);
    await accept(inv.invite_url);
    const table = await ok(['user', 'list', '--company', String(companyId)]);
    assert.match(table, new RegExp(`${email.replace(/[.]/g, '\\.')}.*owner`));
  });

  test('role, reset-link, remove by email; the last owner is refused (exit 1, message of the API)', async () => {
    const companyId = await newCompany(s);
    const owner = freshEmail('owner');
    const dev = freshEmail('dev');
    await accept(JSON.parse(await ok(['user', 'invite', '--company', String(companyId), '--email', owner, '--json'])).invite_url);
    await accept(JSON.parse(await ok(['user', 'invite', '--company', String(companyId), '--email', dev, '--role', 'developer', '--json'])).invite_url);

    assert.match(await ok(['user', 'role', '--email', dev.toUpperCase(), '--role', 'marketer']), /is now marketer \(was developer\)/);
    const last = await cms(['user', 'role', '--email', owner, '--role', 'developer']);
    assert.equal(last.code, 1);
    assert.match(last.stderr, /last owner/);

    const browser = new ConsoleClient(s.url);
    await browser.signIn(dev);
    const out = await ok(['user', 'reset-link', '--email', dev]);
    const link = /^ {2}(http:\/\/\S+\/console\/password-reset\/[A-Za-z0-9_-]{43})$/m.exec(out);
    assert.ok(link, out);
    const p = new URL(link[1]).pathname;
    assert.equal((await new ConsoleClient(s.url).submit(p, p, { password: 'another fine passphrase', password_confirm: 'another fine passphrase' })).status, 303);
    assert.equal((await browser.get('/console/overview')).status, 303, 'sessions ended by the reset');
    await new ConsoleClient(s.url).signIn(dev, 'another fine passphrase');

    assert.match(await ok(['user', 'remove', '--email', dev]), /was removed/);
    const gone = await cms(['user', 'remove', '--email', dev]);
    assert.equal(gone.code, 1);
    assert.match(gone.stderr, /No console user has the email/);
    const lastOwner = await cms(['user', 'remove', '--email', owner]);
    assert.equal(lastOwner.code, 1);
    assert.match(lastOwner.stderr, /last owner/);
  });

  test('revoke-invitation: the link stops working', async () => {
    const companyId = await newCompany(s);
    const inv = JSON.parse(await ok(['user', 'invite', '--company', String(companyId), '--email', freshEmail(), '--role', 'developer', '--json']));
    assert.match(await ok(['user', 'revoke-invitation', String(inv.invitation_id)]), /revoked/);
    assert.equal((await new ConsoleClient(s.url).get(new URL(inv.invite_url).pathname)).status, 404);
  });

  test('refusals: unknown company (exit 1, 404), bad role and id (exit 2, nothing sent)', async () => {
    const unknown = await cms(['user', 'invite', '--company', '2147483000', '--email', freshEmail()]);
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /404|Company not found/);
    const badRole = await cms(['user', 'invite', '--company', '1', '--email', freshEmail(), '--role', 'admin']);
    assert.equal(badRole.code, 2);
    assert.match(badRole.stderr, /--role must be one of owner, developer, marketer/);
    const badId = await cms(['user', 'revoke-invitation', 'abc']);
    assert.equal(badId.code, 2);
  });
});
