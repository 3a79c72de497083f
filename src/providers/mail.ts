/**
 * Outgoing email (docs/console.md#email): invitations and password-reset links of the console's users.
 * A small interface so that the service builds the real one once (service.ts) and tests can use a local
 * SMTP capture server; without SMTP_URL there is no mailer and nothing is sent.
 *
 * The SMTP side is nodemailer, loaded on the first email (a service without mail never loads it): one
 * transport from SMTP_URL (`smtp://` upgrades with STARTTLS when the server offers it, `smtps://` is TLS
 * from the start), a connection per email, with connection, greeting and socket timeouts of 10 s so a
 * stuck mail server cannot hold a console request for long.
 */
import type { Transporter } from 'nodemailer';

/** One plain-text email. */
export interface MailMessage {
  to: string;
  subject: string;
  text: string;
}

/** Sends email; `send` rejects when the server refuses it or cannot be reached (the caller decides). */
export interface Mailer {
  send(message: MailMessage): Promise<void>;
  close(): void;
}

/** Mail through the SMTP server of `url` (SMTP_URL) from `from` (MAIL_FROM). */
export function smtpMailer(url: string, from: string): Mailer {
  let transport: Promise<Transporter> | undefined;
  const open = async () => {
    const nodemailer = (await import('nodemailer')).default;
    return nodemailer.createTransport({ url, connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 10_000 } as Parameters<typeof nodemailer.createTransport>[0], { from });
  };
  return {
    async send(message) {
      transport ??= open();
      await (await transport).sendMail({ from, to: message.to, subject: message.subject, text: message.text });
    },
    close() {
      void transport?.then((t) => t.close(), () => undefined);
    },
  };
}
