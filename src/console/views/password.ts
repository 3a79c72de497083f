/** The password-change form (routes/password.ts). */
import { PASSWORD_MIN } from '../../domain/users.ts';
import { BASE } from './layout.ts';
import { html, type SafeHtml } from './html.ts';

export interface PasswordViewModel { csrf: string; email: string; error?: string }

/** Current password, new password twice. */
export function passwordView(m: PasswordViewModel): SafeHtml {
  const invalid = m.error ? html` aria-invalid="true"` : '';
  return html`<h1>Change password</h1>
<article class="narrow">
  ${m.error ? html`<p id="password-error" class="error" role="alert">${m.error}</p>` : ''}
  <form method="post" action="${BASE}/account/password" novalidate>
    <input type="hidden" name="_csrf" value="${m.csrf}">
    <input type="email" name="username" value="${m.email}" autocomplete="username" readonly hidden>
    <label for="current_password">Current password</label>
    <input id="current_password" name="current_password" type="password" autocomplete="current-password" required maxlength="800"${invalid}>
    <label for="new_password">New password</label>
    <input id="new_password" name="new_password" type="password" autocomplete="new-password" required minlength="${PASSWORD_MIN}" maxlength="200" aria-describedby="new-password-hint"${invalid}>
    <small id="new-password-hint">At least ${PASSWORD_MIN} characters. Your other sessions will be signed out.</small>
    <label for="new_password_confirm">Repeat the new password</label>
    <input id="new_password_confirm" name="new_password_confirm" type="password" autocomplete="new-password" required maxlength="200"${invalid}>
    <button type="submit">Change password</button>
  </form>
</article>`;
}
