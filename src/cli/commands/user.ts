/**
 * `cms user invite --company ID --email E`: POST /admin/companies/{company_id}/users/invitations
 * (issue 6 item 1). Prints the one-time invitation link to hand to the person; it is shown only once
 * and expires after 7 days. `cms user list --company ID`: GET /admin/companies/{company_id}/users.
 */
import type { Command } from 'commander';
import { addCommonOptions, contextFor } from '../context.ts';
import { printJson, printLine, printRecord, printTable } from '../output.ts';
import { parseNonEmpty } from '../parse.ts';

/** Answer of POST /admin/companies/{company_id}/users/invitations. */
export interface InvitationCreated { invitation_id: number; email: string; company_id: number; invite_url: string; expires_at: string }

/** Answer of GET /admin/companies/{company_id}/users. */
export interface CompanyUsers {
  users: { user_id: number; email: string; created_at: string }[];
  invitations: { invitation_id: number; email: string; created_at: string; expires_at: string }[];
}

const seg = (id: string): string => encodeURIComponent(id);

/** Register `user invite --company ID --email E` and `user list --company ID` on `program`. */
export function registerUser(program: Command): void {
  const group = program.command('user').description('invite people to a company\'s console and list them');

  addCommonOptions(
    group
      .command('invite')
      .description('invite a person to the company console; prints a one-time link (valid 7 days)')
      .requiredOption('--company <id>', 'company id', parseNonEmpty)
      .requiredOption('--email <email>', 'the person\'s email address (their sign-in name)', parseNonEmpty),
  ).action(async (opts: { company: string; email: string }, cmd: Command) => {
    const ctx = await contextFor(cmd);
    const inv = await ctx.client.request<InvitationCreated>('POST', `/admin/companies/${seg(opts.company)}/users/invitations`, { email: opts.email });
    if (ctx.json) {
      printJson(inv);
      return;
    }
    const { invite_url: url, ...rest } = inv;
    printRecord(rest, 'Invitation created:');
    printLine();
    printLine(`  ${url}`);
    printLine();
    printLine(`Send this link to ${inv.email}: it works once, until ${inv.expires_at}, and is shown only now.`);
    printLine('Opening it lets them choose a password; then they sign in at /console/login.');
  });

  addCommonOptions(
    group
      .command('list')
      .description('list the console users and pending invitations of a company')
      .requiredOption('--company <id>', 'company id', parseNonEmpty),
  ).action(async (opts: { company: string }, cmd: Command) => {
    const ctx = await contextFor(cmd);
    const res = await ctx.client.request<CompanyUsers>('GET', `/admin/companies/${seg(opts.company)}/users`);
    if (ctx.json) {
      printJson(res);
      return;
    }
    printLine('Users:');
    printTable(res.users, [{ key: 'user_id' }, { key: 'email' }, { key: 'created_at' }]);
    printLine('Pending invitations:');
    printTable(res.invitations, [{ key: 'invitation_id' }, { key: 'email' }, { key: 'created_at' }, { key: 'expires_at' }]);
  });
}
