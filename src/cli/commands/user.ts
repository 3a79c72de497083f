/**
 * `cms user …`: the console users of a company and their roles,
 * through the operator API (src/http/admin/users.ts):
 *
 * - `invite --company ID --email E [--role owner|developer|marketer]` → POST
 *   /admin/companies/{company_id}/users/invitations; prints the one-time link (7 days; role default owner);
 * - `list --company ID` → GET /admin/companies/{company_id}/users (users with roles, pending invitations);
 * - `role --email E --role R` → PATCH /admin/users/{user_id} (409 for the company's last owner);
 * - `remove --email E` → DELETE /admin/users/{user_id} (their sessions end at once; 409 last owner);
 * - `reset-link --email E` → POST /admin/users/{user_id}/password-resets; prints the one-time link (1 hour);
 * - `revoke-invitation INVITATION_ID` → DELETE /admin/invitations/{invitation_id}.
 *
 * Users are named by email (unique across companies), found with GET /admin/users?email=; an unknown
 * email fails with exit code 1 before anything changes.
 */
import type { Command } from 'commander';
import { data, integerId, type OperatorApi } from '../client.ts';
import { addCommonOptions, contextFor } from '../context.ts';
import { CliError, UsageError } from '../errors.ts';
import { printJson, printLine, printRecord, printTable } from '../output.ts';
import { parseNonEmpty } from '../parse.ts';
import type { CliIo } from '../io.ts';

/** The roles a console user can have. */
const ROLES = ['owner', 'developer', 'marketer'] as const;
type Role = typeof ROLES[number];

/** `--role` value, checked before any request (exit code 2 otherwise). */
function parseRole(value: string): Role {
  const v = value.trim().toLowerCase();
  if (!(ROLES as readonly string[]).includes(v)) throw new UsageError(`--role must be one of ${ROLES.join(', ')}, got "${value}"`);
  return v as Role;
}

/** The user with `email` (any company); CliError when there is none. */
async function userByEmail(api: OperatorApi, email: string) {
  const { users } = await data(api.GET('/admin/users', { params: { query: { email } } }));
  const user = users[0];
  if (!user) throw new CliError(`No console user has the email ${email.trim()}.`);
  return user;
}

/** Register the `user` commands of the module comment on `program`. */
export function registerUser(program: Command, io: CliIo): void {
  const group = program.command('user').description('invite people to a company\'s console, give them roles, remove them, reset passwords');

  addCommonOptions(
    group
      .command('invite')
      .description('invite a person to the company console with a role; prints a one-time link (valid 7 days)')
      .requiredOption('--company <id>', 'company id', parseNonEmpty)
      .requiredOption('--email <email>', 'the person\'s email address (their sign-in name)', parseNonEmpty)
      .option('--role <role>', `${ROLES.join(' | ')} (default owner)`),
  ).action(async (opts: { company: string; email: string; role?: string }, cmd: Command) => {
    const companyId = integerId(opts.company, 'company id');
    const role = opts.role === undefined ? 'owner' : parseRole(opts.role);
    const ctx = await contextFor(cmd, io);
    const inv = await data(ctx.api.POST('/admin/companies/{company_id}/users/invitations', {
      params: { path: { company_id: companyId } }, body: { email: opts.email, role },
    }));
    if (ctx.json) {
      printJson(io, inv);
      return;
    }
    const { invite_url: url, ...rest } = inv;
    printRecord(io, rest, 'Invitation created:');
    printLine(io);
    printLine(io, `  ${url}`);
    printLine(io);
    printLine(io, inv.email_sent
      ? `It was emailed to ${inv.email}. It works once, until ${inv.expires_at}, and is shown only now.`
      : `Send this link to ${inv.email}: it works once, until ${inv.expires_at}, and is shown only now.`);
    printLine(io, `Opening it lets them choose a password and join as ${inv.role}; then they sign in at /console/login.`);
  });

  addCommonOptions(
    group
      .command('list')
      .description('list the console users (with their roles) and pending invitations of a company')
      .requiredOption('--company <id>', 'company id', parseNonEmpty),
  ).action(async (opts: { company: string }, cmd: Command) => {
    const companyId = integerId(opts.company, 'company id');
    const ctx = await contextFor(cmd, io);
    const res = await data(ctx.api.GET('/admin/companies/{company_id}/users', { params: { path: { company_id: companyId } } }));
    if (ctx.json) {
      printJson(io, res);
      return;
    }
    printLine(io, 'Users:');
    printTable(io, res.users, [{ key: 'user_id' }, { key: 'email' }, { key: 'role' }, { key: 'created_at' }]);
    printLine(io, 'Pending invitations:');
    printTable(io, res.invitations, [{ key: 'invitation_id' }, { key: 'email' }, { key: 'role' }, { key: 'invited_by' }, { key: 'expires_at' }]);
  });

  addCommonOptions(
    group
      .command('role')
      .description('give a console user another role (the last owner of a company cannot be demoted)')
      .requiredOption('--email <email>', 'the user\'s email', parseNonEmpty)
      .requiredOption('--role <role>', ROLES.join(' | ')),
  ).action(async (opts: { email: string; role: string }, cmd: Command) => {
    const role = parseRole(opts.role);
    const ctx = await contextFor(cmd, io);
    const user = await userByEmail(ctx.api, opts.email);
    const changed = await data(ctx.api.PATCH('/admin/users/{user_id}', { params: { path: { user_id: user.user_id } }, body: { role } }));
    if (ctx.json) printJson(io, changed);
    else printLine(io, user.role === changed.role ? `${changed.email} is ${changed.role} already.` : `${changed.email} is now ${changed.role} (was ${user.role}).`);
  });

  addCommonOptions(
    group
      .command('remove')
      .description('remove a console user; their sessions end at once (the last owner of a company cannot be removed)')
      .requiredOption('--email <email>', 'the user\'s email', parseNonEmpty),
  ).action(async (opts: { email: string }, cmd: Command) => {
    const ctx = await contextFor(cmd, io);
    const user = await userByEmail(ctx.api, opts.email);
    await data(ctx.api.DELETE('/admin/users/{user_id}', { params: { path: { user_id: user.user_id } } }));
    if (ctx.json) printJson(io, { user_id: user.user_id, email: user.email, removed: true });
    else printLine(io, `${user.email} was removed from company ${user.company_id} and signed out.`);
  });

  addCommonOptions(
    group
      .command('reset-link')
      .description('make a one-time password reset link for a console user (valid 1 hour); prints it')
      .requiredOption('--email <email>', 'the user\'s email', parseNonEmpty),
  ).action(async (opts: { email: string }, cmd: Command) => {
    const ctx = await contextFor(cmd, io);
    const user = await userByEmail(ctx.api, opts.email);
    const reset = await data(ctx.api.POST('/admin/users/{user_id}/password-resets', { params: { path: { user_id: user.user_id } } }));
    if (ctx.json) {
      printJson(io, reset);
      return;
    }
    printLine(io, `Password reset link for ${reset.email}:`);
    printLine(io);
    printLine(io, `  ${reset.reset_url}`);
    printLine(io);
    if (reset.email_sent) printLine(io, `It was emailed to ${reset.email}.`);
    printLine(io, `It works once, until ${reset.expires_at}, and is shown only now; a newer link replaces it.`);
    printLine(io, 'Their password and sessions stay until they use it; then every session of theirs ends.');
  });

  addCommonOptions(
    group
      .command('revoke-invitation')
      .description('revoke a pending invitation: its link stops working')
      .argument('<invitation-id>', 'invitation id (from `cms user list`)', parseNonEmpty),
  ).action(async (invitationId: string, _opts: unknown, cmd: Command) => {
    const id = integerId(invitationId, 'invitation id');
    const ctx = await contextFor(cmd, io);
    await data(ctx.api.DELETE('/admin/invitations/{invitation_id}', { params: { path: { invitation_id: id } } }));
    if (ctx.json) printJson(io, { invitation_id: id, revoked: true });
    else printLine(io, `Invitation ${id} revoked.`);
  });
}
