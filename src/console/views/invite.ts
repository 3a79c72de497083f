/** The form of an invitation link: choose a password (routes/invite.ts). */
import { PASSWORD_MIN, type Role } from '../../domain/users.ts';
import { ROLE_SUMMARY } from '../permissions.ts';
import { BASE } from './layout.ts';
import { html, type SafeHtml } from './html.ts';

export interface InviteViewModel { csrf: string; token: string; email: string; role: Role; company: string; error?: string }

/** Shows who is invited where with which role, and asks for a new password twice; an error sits beside the first field. */
export function inviteView(m: InviteViewModel): SafeHtml {
  const invalid = m.error ? html` aria-invalid="true"` : '';
  return html`<article class="narrow">
  <h1>Join ${m.company}</h1>
  <p>You were invited to the console of <strong>${m.company}</strong> as <strong>${m.email}</strong>, with the role <strong>${m.role}</strong> (${ROLE_SUMMARY[m.role]}). Choose a password to create your account.</p>
  <form method="post" action="${BASE}/invite/${encodeURIComponent(m.token)}" novalidate>
    <input type="hidden" name="_csrf" value="${m.csrf}">
    <input type="email" name="username" value="${m.email}" autocomplete="username" readonly hidden>
    <label for="password">New password</label>
    <input id="password" name="password" type="password" autocomplete="new-password" required minlength="${PASSWORD_MIN}" maxlength="200" aria-describedby="${m.error ? 'invite-error ' : ''}password-hint"${invalid} autofocus>
    ${m.error ? html`<small id="invite-error" class="error" role="alert">${m.error}</small>` : ''}
    <small id="password-hint">At least ${PASSWORD_MIN} characters. A passphrase of a few words is easy to remember.</small>
    <label for="password_confirm">Repeat the password</label>
    <input id="password_confirm" name="password_confirm" type="password" autocomplete="new-password" required maxlength="200"${invalid}>
    <button type="submit">Create account</button>
  </form>
</article>`;
}
