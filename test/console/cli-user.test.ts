/**
 * `cms user invite` and `cms user list` (src/cli/commands/user.ts) against the real service: the
 * command is registered on a fresh commander program in a child process (the `cms` binary wires it in
 * program.ts).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { execFile } from 'node:child_process';
import { ADMIN_TOKEN, startTestServer, type TestServer } from '../helpers/server.ts';
import { ConsoleClient, freshEmail, newCompany, PASSWORD } from './helpers.ts';

let s: TestServer;
before(async () => { s = await startTestServer({ role: 'api' }); });
after(() => s.close());

const USER_COMMAND = new URL('../../src/cli/commands/user.ts', import.meta.url).href;

/**
 * Runs `cms <args>` with only the `user` command registered, in a child process (the test runner owns
 * this process's stdout). Resolves to stdout; rejects with stderr when the command fails.
 */
function cms(args: string[]): Promise<string> {
  const script = `
    import { Command } from 'commander';
    import { registerUser } from ${JSON.stringify(USER_COMMAND)};
    const program = new Command('cms').exitOverride();
    registerUser(program);
    await program.parseAsync(process.argv.slice(1), { from: 'user' });`;
  return new Promise((resolve, reject) => {
    execFile(process.execPath, ['--input-type=module', '-e', script, '--', ...args, '--url', s.url, '--token', ADMIN_TOKEN],
      { cwd: process.cwd(), timeout: 60_000 }, (err, stdout, stderr) => (err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(stdout)));
  });
}

describe('cms user', () => {
  test('invite prints the one-time link on its own line; the link lets the person join and sign in', async () => {
    const companyId = await newCompany(s);
    const email = freshEmail('cli');
    const out = await cms(['user', 'invite', '--company', String(companyId), '--email', email]);
    const m = /^ {2}(http:\/\/\S+\/console\/invite\/[A-Za-z0-9_-]{43})$/m.exec(out);
    assert.ok(m, out);
    assert.match(out, /works once/);
    const p = new URL(m[1]).pathname;
    const c = new ConsoleClient(s.url);
    assert.equal((await c.submit(p, p, { password: PASSWORD, password_confirm: PASSWORD })).status, 303);
    await c.signIn(email);
  });

  test('--json prints the answer; list shows users and pending invitations', async () => {
    const companyId = await newCompany(s);
    const email = freshEmail('cli');
    const inv = JSON.parse(await cms(['user', 'invite', '--company', String(companyId), '--email', email, '--json']));
    assert.deepEqual(Object.keys(inv).sort(), ['company_id', 'email', 'expires_at', 'invitation_id', 'invite_url']);
    const list = JSON.parse(await cms(['user', 'list', '--company', String(companyId), '--json']));
    assert.deepEqual(list.invitations.map((i: { email: string }) => i.email), [email]);
    assert.match(await cms(['user', 'list', '--company', String(companyId)]), new RegExp(email.replace(/[.]/g, '\\.')));
  });

  test('refusals surface as errors (unknown company)', async () => {
    await assert.rejects(cms(['user', 'invite', '--company', '2147483000', '--email', freshEmail()]), /404|Company not found/);
  });
});
