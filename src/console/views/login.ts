/** The sign-in form (routes/login.ts). */
import { BASE } from './layout.ts';
import { html, type SafeHtml } from './html.ts';

export interface LoginViewModel { csrf: string; next: string; email: string; error?: string }

/** Email and password form; an error is announced (role=alert) and tied to the fields. */
export function loginView(m: LoginViewModel): SafeHtml {
  const invalid = m.error ? html` aria-invalid="true" aria-describedby="login-error"` : '';
  return html`<article class="narrow">
  <h1>Sign in</h1>
  ${m.error ? html`<p id="login-error" class="error" role="alert">${m.error}</p>` : ''}
  <form method="post" action="${BASE}/login" novalidate>
    <input type="hidden" name="_csrf" value="${m.csrf}">
    <input type="hidden" name="next" value="${m.next}">
    <label for="email">Email</label>
    <input id="email" name="email" type="email" autocomplete="username" required maxlength="254" value="${m.email}"${invalid}${m.email ? '' : html` autofocus`}>
    <label for="password">Password</label>
    <input id="password" name="password" type="password" autocomplete="current-password" required maxlength="800"${invalid}${m.email ? html` autofocus` : ''}>
    <button type="submit">Sign in</button>
  </form>
  <p><small>No account yet, or forgot your password? Ask an owner of your company's console (or the service's operator) for an invitation or a password reset link.</small></p>
</article>`;
}
