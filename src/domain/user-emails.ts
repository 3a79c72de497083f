/**
 * The emails of the console's users (docs/console.md#email): an invitation and a password-reset link,
 * as plain text. Pure: the caller sends them (src/providers/mail.ts) after the link was committed, and
 * shows the link to the owner whatever happened to the email, so a mail outage never loses an invitation.
 *
 * Times are written in UTC with the zone named (`2026-12-04 09:30 UTC`): an email is read wherever its
 * reader is, and the link's end does not depend on the sender's zone.
 */
import type { Logger } from 'pino';
import type { Db } from '../db/database.ts';
import { getCompany } from './companies.ts';
import type { Role } from './users/roles.ts';

/** What an email says: its subject and its plain-text body (lines separated by LF). */
export interface EmailContent {
  subject: string;
  text: string;
}

/** `2026-12-04 09:30 UTC` for an instant. */
function utc(d: Date): string {
  return `${d.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

/** The roles as a sentence says them. */
const ROLE_WORDS: Record<Role, string> = {
  owner: 'an owner (everything, including users and roles)',
  developer: 'a developer (credentials and webhooks; everything else read-only)',
  marketer: 'a marketer (automations, campaigns, templates, segments, contacts and sends)',
};

/** The invitation to join `companyName` with `role`, through `link`, valid until `expiresAt`. */
export function invitationEmail(input: { companyName: string; role: Role; link: string; expiresAt: Date }): EmailContent {
  return {
    subject: `You are invited to ${input.companyName}`,
    text: [
      `You are invited to join ${input.companyName} on its messaging console as ${ROLE_WORDS[input.role] ?? input.role}.`,
      '',
      'Open this link to choose your password and join:',
      input.link,
      '',
      `The link works once, until ${utc(input.expiresAt)}. If you did not expect this email, ignore it: nothing happens unless the link is opened.`,
      '',
    ].join('\n'),
  };
}

/** The password-reset link of a user of `companyName`, valid until `expiresAt`. */
export function passwordResetEmail(input: { companyName: string; link: string; expiresAt: Date }): EmailContent {
  return {
    subject: `Reset your password for ${input.companyName}`,
    text: [
      `A new password was requested for your account on the messaging console of ${input.companyName}.`,
      '',
      'Open this link to choose a new password (every session you have open then ends):',
      input.link,
      '',
      `The link works once, until ${utc(input.expiresAt)}. Your current password keeps working until the link is used. If you did not ask for this, ignore this email or tell the owner of your company's account.`,
      '',
    ].join('\n'),
  };
}

/** What the domain needs of a mailer (src/providers/mail.ts `Mailer` is one): send one plain-text email. */
export interface UserMailer {
  send(message: { to: string; subject: string; text: string }): Promise<void>;
}

/** Where an email goes out: the service's mailer (undefined without SMTP_URL) and a logger for failures. */
export interface EmailSender {
  mailer: UserMailer | undefined;
  logger: Pick<Logger, 'warn'>;
}

/**
 * Sends `content` to `to` through the sender's mailer: true when the SMTP server took it, false when
 * there is no mailer or sending failed (logged at warn with the server's error, never the link). Never
 * throws: the link is shown to whoever made it either way.
 */
export async function sendUserEmail(sender: EmailSender, to: string, content: EmailContent): Promise<boolean> {
  if (!sender.mailer) return false;
  try {
    await sender.mailer.send({ to, subject: content.subject, text: content.text });
    return true;
  } catch (err) {
    sender.logger.warn({ to, subject: content.subject, err: (err as Error).message }, 'email not sent');
    return false;
  }
}

/**
 * Emails a just-made invitation's `link` to the invited person (the company's name read from `db`);
 * true when the SMTP server took it (see {@link sendUserEmail}).
 */
export async function emailInvitation(db: Db, sender: EmailSender, inv: { company_id: number; email: string; role: Role; expires_at: Date }, link: string): Promise<boolean> {
  const { name: companyName } = await getCompany(db, inv.company_id);
  return sendUserEmail(sender, inv.email, invitationEmail({ companyName, role: inv.role, link, expiresAt: inv.expires_at }));
}

/**
 * Emails a just-made password reset `link` to the user (the company's name read from `db`); true when
 * the SMTP server took it (see {@link sendUserEmail}).
 */
export async function emailPasswordReset(db: Db, sender: EmailSender, reset: { company_id: number; email: string; expires_at: Date }, link: string): Promise<boolean> {
  const { name: companyName } = await getCompany(db, reset.company_id);
  return sendUserEmail(sender, reset.email, passwordResetEmail({ companyName, link, expiresAt: reset.expires_at }));
}
