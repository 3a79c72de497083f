/**
 * Invitation and password-reset emails (docs/console.md#email), through the real server and a local
 * SMTP capture server (smtp-server): with SMTP_URL the console and the operator API email the one-time
 * link to the person and say so (`email_sent`, the page's notice), and the link in the email is the one
 * shown and it works; a mail server that refuses the email leaves the link shown and valid, with
 * `email_sent: false` and the page saying the email could not be sent; without SMTP_URL nothing is
 * sent and the answers read as before. Bad configuration stops the start with a clear message.
 */
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { SMTPServer } from 'smtp-server';
import { loadConfig } from '../../src/config.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { ConsoleClient, freshEmail, signedInClient } from './helpers.ts';

/** One email as the capture server received it: envelope and the decoded text of the message. */
interface Captured { from: string; to: string[]; raw: string; text: string }

/** Undoes quoted-printable (soft line breaks and =XX bytes), as nodemailer writes long text lines. */
function decodeQuotedPrintable(s: string): string {
  return Buffer.from(s.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16))), 'latin1').toString('utf8');
}

/** An SMTP server on a free port that keeps what it gets; while `refuse` is set it answers 550 to every recipient. */
async function captureServer(): Promise<{ url: string; mails: Captured[]; refuse: boolean; close(): Promise<void> }> {
  const mails: Captured[] = [];
  const opts = { refuse: false };
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onRcptTo(address, _session, cb) {
      if (opts.refuse) return cb(Object.assign(new Error('mailbox unavailable'), { responseCode: 550 }));
      cb();
    },
    onData(stream, session, cb) {
      const parts: Buffer[] = [];
      stream.on('data', (d: Buffer) => parts.push(d));
      stream.on('end', () => {
        const raw = Buffer.concat(parts).toString('utf8');
        const body = raw.slice(raw.indexOf('\r\n\r\n') + 4);
        mails.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
          raw,
          text: /quoted-printable/i.test(raw) ? decodeQuotedPrintable(body) : body,
        });
        cb();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as AddressInfo;
  return {
    url: `smtp://127.0.0.1:${port}`, mails,
    get refuse() { return opts.refuse; },
    set refuse(v: boolean) { opts.refuse = v; },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

const linkIn = (text: string, kind: 'invite' | 'password-reset') => new RegExp(`https?://\\S+/console/${kind}/[A-Za-z0-9_-]+`).exec(text)?.[0];
const newLinkOnPage = (html: string) => /id="new-link-value"[^>]*value="([^"]+)"/.exec(html)?.[1];

let smtp: Awaited<ReturnType<typeof captureServer>>;
let s: TestServer;
before(async () => {
  smtp = await captureServer();
  s = await startTestServer({ env: { SMTP_URL: smtp.url, MAIL_FROM: 'Shop Console <no-reply@shop.example>' } });
});
after(async () => { await s.close(); await smtp.close(); });

describe('happy', () => {
  test('the console emails an invitation; the page says so and shows the same link, which works', async () => {
    const c = await s.company({ name: 'Acme Shoes' });
    const owner = await signedInClient(s, c.companyId, 'owner');
    const email = freshEmail('invitee');
    const r = await owner.submit('/console/settings/users', '/console/settings/users/invitations', { email, role: 'marketer' });
    assert.equal(r.status, 303);
    const page = await owner.get('/console/settings/users');
    assert.match(page.text, /We emailed this link to <strong>[^<]+<\/strong>/);
    const shown = newLinkOnPage(page.text);
    assert.ok(shown, 'the link is still shown once');

    const mail = smtp.mails.find((m) => m.to.includes(email));
    assert.ok(mail, 'an email went to the invited address');
    assert.equal(mail.from, 'no-reply@shop.example');
    assert.match(mail.raw, /^Subject: You are invited to Acme Shoes\r?$/m);
    assert.match(mail.text, /as a marketer/);
    assert.match(mail.text, /until \d{4}-\d\d-\d\d \d\d:\d\d UTC/);
    assert.equal(linkIn(mail.text, 'invite'), shown, 'the emailed link is the one shown');

    // The emailed link opens the invitation page of that company.
    const invitee = new ConsoleClient(s.url);
    const invitePage = await invitee.get(new URL(shown!).pathname);
    assert.equal(invitePage.status, 200);
    assert.match(invitePage.text, /Acme Shoes/);
  });

  test('the operator API emails invitations and reset links and answers email_sent: true', async () => {
    const c = await s.company({ name: 'Globex' });
    const email = freshEmail('ops');
    const inv = await s.admin('POST', `/admin/companies/${c.companyId}/users/invitations`, { email, role: 'developer' }, 201);
    assert.equal(inv.email_sent, true);
    const mail = smtp.mails.find((m) => m.to.includes(email));
    assert.ok(mail);
    assert.equal(linkIn(mail.text, 'invite'), inv.invite_url);
    assert.match(mail.text, /as a developer/);

    await signedInClient(s, c.companyId, 'owner');
    const users = await s.admin('GET', `/admin/companies/${c.companyId}/users`);
    const user = users.users[0];
    const before = smtp.mails.length;
    const reset = await s.admin('POST', `/admin/users/${user.user_id}/password-resets`, undefined, 201);
    assert.equal(reset.email_sent, true);
    assert.equal(smtp.mails.length, before + 1);
    const resetMail = smtp.mails.at(-1)!;
    assert.deepEqual(resetMail.to, [user.email]);
    assert.match(resetMail.raw, /^Subject: Reset your password for Globex\r?$/m);
    assert.equal(linkIn(resetMail.text, 'password-reset'), reset.reset_url);
  });

  test('an owner\'s reset link from the console is emailed to that user', async () => {
    const c = await s.company({ name: 'Initech' });
    const owner = await signedInClient(s, c.companyId, 'owner');
    const users = await s.admin('GET', `/admin/companies/${c.companyId}/users`);
    const me = users.users[0];
    const r = await owner.submit(`/console/settings/users/${me.user_id}`, `/console/settings/users/${me.user_id}/reset-link`, {});
    assert.equal(r.status, 303);
    const page = await owner.get(`/console/settings/users/${me.user_id}`);
    assert.match(page.text, /We emailed this link to/);
    const mail = smtp.mails.filter((m) => m.to.includes(me.email)).at(-1);
    assert.ok(mail);
    assert.equal(linkIn(mail.text, 'password-reset'), newLinkOnPage(page.text));
  });
});

describe('error', () => {
  test('a mail server that refuses: the link is shown and valid, email_sent is false, the page says the email failed', async () => {
    const c = await s.company();
    const owner = await signedInClient(s, c.companyId, 'owner');
    const before = smtp.mails.length;
    smtp.refuse = true;
    try {
      const inv = await s.admin('POST', `/admin/companies/${c.companyId}/users/invitations`, { email: freshEmail('x') }, 201);
      assert.equal(inv.email_sent, false);
      assert.equal((await new ConsoleClient(s.url).get(new URL(inv.invite_url).pathname)).status, 200, 'the invitation stands');
      await owner.submit('/console/settings/users', '/console/settings/users/invitations', { email: freshEmail('y'), role: 'owner' });
      const page = await owner.get('/console/settings/users');
      assert.match(page.text, /could not be sent\. Copy the link and send it yourself\./);
      assert.ok(newLinkOnPage(page.text));
      assert.equal(smtp.mails.length, before);
    } finally {
      smtp.refuse = false;
    }
  });

  test('without SMTP_URL nothing is emailed and the pages read as before', async () => {
    const plain = await startTestServer();
    try {
      const c = await plain.company();
      const inv = await plain.admin('POST', `/admin/companies/${c.companyId}/users/invitations`, { email: freshEmail('n') }, 201);
      assert.equal(inv.email_sent, false);
      const owner = await signedInClient(plain, c.companyId, 'owner');
      await owner.submit('/console/settings/users', '/console/settings/users/invitations', { email: freshEmail('m'), role: 'owner' });
      const page = await owner.get('/console/settings/users');
      assert.doesNotMatch(page.text, /emailed|could not be sent/);
      assert.match(page.text, /Send it to [^ ]+ yourself/);
    } finally {
      await plain.close();
    }
  });

  test('bad mail configuration stops the start with a clear message', () => {
    assert.throws(() => loadConfig({ SMTP_URL: 'http://mail.example.com' }), /SMTP_URL must start with smtp:\/\/ or smtps:\/\//);
    assert.throws(() => loadConfig({ SMTP_URL: 'not a url' }), /SMTP_URL must be a URL/);
    assert.throws(() => loadConfig({ SMTP_URL: 'smtp://mail.example.com' }), /MAIL_FROM must be set/);
    assert.throws(() => loadConfig({ SMTP_URL: 'smtp://mail.example.com', MAIL_FROM: 'nobody' }), /MAIL_FROM must be an email address/);
    assert.equal(loadConfig({ SMTP_URL: 'smtps://u:p@mail.example.com:465', MAIL_FROM: 'Shop <no-reply@shop.example>' }).mailFrom, 'Shop <no-reply@shop.example>');
  });
});

describe('security', () => {
  test('the email goes to the invited address only, and another company\'s user gets no reset link', async () => {
    const a = await s.company();
    const b = await s.company();
    const ownerB = await signedInClient(s, b.companyId, 'owner');
    await signedInClient(s, a.companyId, 'owner');
    const before = smtp.mails.length;
    const email = freshEmail('only');
    await s.admin('POST', `/admin/companies/${a.companyId}/users/invitations`, { email }, 201);
    assert.deepEqual(smtp.mails.slice(before).map((m) => m.to), [[email]]);
    const usersA = await s.admin('GET', `/admin/companies/${a.companyId}/users`);
    const r = await ownerB.submit('/console/settings/users', `/console/settings/users/${usersA.users[0].user_id}/reset-link`, {});
    assert.equal(r.status, 404);
    assert.equal(smtp.mails.length, before + 1, 'nothing more was sent');
  });
});
