/** The form of a password reset link: choose a new password (routes/password-reset.ts). */
import { PASSWORD_MIN } from '../../domain/users.ts';
import { BASE } from './layout.ts';
import { html, type SafeHtml } from './html.ts';

export interface PasswordResetViewModel { csrf: string; token: string; email: string; company: string; error?: string }

/** Says whose password is reset, asks for the new one twice; an error sits beside the first field. */
export function passwordResetView(m: PasswordResetViewModel): SafeHtml {
  const invalid = m.error ? html` aria-invalid="true"` : '';
  return html`<article class="narrow">
  <h1>Choose a new password</h1>
  <p>For <strong>${m.email}</strong> in the console of <strong>${m.company}</strong>. Every session of this account ends when the new password is set.</p>
  <form method="post" action="${BASE}/password-reset/${encodeURIComponent(m.token)}" novalidate>
    <input type="hidden" name="_csrf" value="${m.csrf}">
    <input type="email" name="username" value="${m.email}" autocomplete="username" readonly hidden>
    <label for="password">New password</label>
    <input id="password" name="password" type="password" autocomplete="new-password" required minlength="${PASSWORD_MIN}" maxlength="200" aria-describedby="${m.error ? 'password-error ' : ''}password-hint"${invalid} autofocus>
    ${m.error ? html`<small id="password-error" class="error" role="alert">${m.error}</small>` : ''}
    <small id="password-hint">At least ${PASSWORD_MIN} characters. A passphrase of a few words is easy to remember.</small>
    <label for="password_confirm">Repeat the new password</label>
    <input id="password_confirm" name="password_confirm" type="password" autocomplete="new-password" required maxlength="200"${invalid}>
    <button type="submit">Set password</button>
  </form>
</article>`;
}
