/** The password-change form (routes/password.ts). */
import { PASSWORD_MIN } from '../../domain/users.ts';
import { BASE } from './layout.ts';
import { html, type SafeHtml } from './html.ts';

/** Which field an error belongs to. */
export type PasswordField = 'current_password' | 'new_password' | 'new_password_confirm';

export interface PasswordViewModel { csrf: string; email: string; error?: { field: PasswordField; text: string } }

/** Current password, new password twice; an error is shown beside its field. */
export function passwordView(m: PasswordViewModel): SafeHtml {
  const e = m.error;
  const invalid = (f: PasswordField, hint?: string) => {
    const ids = [e?.field === f ? `${f}-error` : '', hint ?? ''].filter(Boolean).join(' ');
    return html`${e?.field === f ? html` aria-invalid="true"` : ''}${ids ? html` aria-describedby="${ids}"` : ''}`;
  };
  const error = (f: PasswordField) => (e?.field === f ? html`<small id="${f}-error" class="error" role="alert">${e.text}</small>` : '');
  return html`<h1>Change password</h1>
<article class="narrow">
  <form method="post" action="${BASE}/account/password" novalidate>
    <input type="hidden" name="_csrf" value="${m.csrf}">
    <input type="email" name="username" value="${m.email}" autocomplete="username" readonly hidden>
    <label for="current_password">Current password</label>
    <input id="current_password" name="current_password" type="password" autocomplete="current-password" required maxlength="800"${invalid('current_password')}>
    ${error('current_password')}
    <label for="new_password">New password</label>
    <input id="new_password" name="new_password" type="password" autocomplete="new-password" required minlength="${PASSWORD_MIN}" maxlength="200"${invalid('new_password', 'new-password-hint')}>
    ${error('new_password')}
    <small id="new-password-hint">At least ${PASSWORD_MIN} characters. Your other sessions will be signed out.</small>
    <label for="new_password_confirm">Repeat the new password</label>
    <input id="new_password_confirm" name="new_password_confirm" type="password" autocomplete="new-password" required maxlength="200"${invalid('new_password_confirm')}>
    ${error('new_password_confirm')}
    <button type="submit">Change password</button>
  </form>
</article>`;
}
