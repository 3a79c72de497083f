/**
 * Settings › Users (routes/users.ts): the list of users with their roles, pending
 * invitations and the invite form; one user's page (role, reset link, removal, history); the removal
 * confirmation. One-time links (invitation, password reset) are shown once with a Copy button.
 */
import { PASSWORD_RESET_TTL_MS, ROLES, type ListedInvitation, type ListedUser, type Role } from '../../domain/users.ts';
import type { NewLink } from '../link-flash.ts';
import { ROLE_SUMMARY } from '../permissions.ts';
import { time } from './format.ts';
import { BASE } from './layout.ts';
import { html, type SafeHtml } from './html.ts';
import { dataTable } from './table.ts';

/** Where the users pages live. */
export const USERS_PATH = `${BASE}/settings/users`;
/** Breadcrumbs of the users list. */
export const USERS_CRUMBS: [string, string?][] = [['Settings'], ['Users', USERS_PATH]];

/** The invite form's values and its errors beside the fields. */
export interface InviteForm { email: string; role: string }
export interface InviteErrors { email?: string; role?: string }

/** An audit entry of a user's history. */
export interface HistoryEntry { at: Date; actor: string; action: string; details: unknown }

const inv = (error: string | undefined, id: string) => (error ? html` aria-invalid="true" aria-describedby="${id}"` : '');
const fieldError = (error: string | undefined, id: string) => (error ? html`<small id="${id}" class="error" role="alert">${error}</small>` : '');

function roleBadge(role: Role): SafeHtml {
  return html`<span class="badge badge-role">${role}</span>`;
}

/** Radio buttons for a role, each with what it allows; `error` is shown beside the group. */
function roleFieldset(name: string, selected: string, error: string | undefined, legend: string): SafeHtml {
  const errorId = `${name}-error`;
  return html`<fieldset${error ? html` aria-describedby="${errorId}"` : ''}>
  <legend>${legend}</legend>
  ${ROLES.map((r) => html`<label for="${name}-${r}"><input type="radio" id="${name}-${r}" name="${name}" value="${r}"${selected === r ? html` checked` : ''}> <strong>${r}</strong>: <span class="muted">${ROLE_SUMMARY[r]}</span></label>`)}
  ${fieldError(error, errorId)}
</fieldset>`;
}

/** The just-made link, shown once, with a Copy button (console.js) and what it does. */
function newLinkPanel(link: NewLink): SafeHtml {
  const invitation = link.kind === 'invitation';
  return html`<article class="new-key" aria-labelledby="new-key-title">
  <h2 id="new-key-title" tabindex="-1">${invitation ? html`Invitation link for ${link.email}` : html`Password reset link for ${link.email}`}</h2>
  ${link.emailed === true
    ? html`<p role="status">We emailed this link to <strong>${link.email}</strong>.</p>`
    : link.emailed === false
      ? html`<p role="alert" class="error">The email to ${link.email} could not be sent. Copy the link and send it yourself.</p>`
      : ''}
  <p><strong>${link.emailed === true ? 'You can also copy it now: it is shown only this once.' : 'Copy it now: it is shown only this once.'}</strong> ${link.emailed === true ? '' : html`Send it to ${link.email} yourself (for example by email or chat). `}It works once, until ${time(link.expires_at)}.
  ${invitation
    ? html`Opening it lets them choose a password and join as <strong>${link.role ?? ''}</strong>.`
    : 'Opening it lets them choose a new password; all their sessions then end. Their current password keeps working until then.'}</p>
  <label for="new-link-value">Link</label>
  <div role="group" class="key-copy">
    <input id="new-link-value" type="text" readonly value="${link.url}" spellcheck="false" autocomplete="off" data-new-link>
    <button type="button" data-copy="new-link-value">Copy</button>
  </div>
  <p class="copy-status" role="status" aria-live="polite" data-copy-status></p>
</article>`;
}

export interface UsersViewModel {
  csrf: string;
  users: ListedUser[];
  invitations: ListedInvitation[];
  /** The signed-in user (marked "you"). */
  me: number;
  form: InviteForm;
  errors: InviteErrors;
  created?: NewLink;
}

function userTable(users: ListedUser[], me: number): SafeHtml {
  return dataTable({
    label: 'Users of the company',
    columns: [{ head: 'Email' }, { head: 'Role' }, { head: 'Joined' }],
    rows: users.map((u) => ({
      attrs: html`data-user-id="${u.user_id}"`,
      cells: [
        html`<a href="${USERS_PATH}/${u.user_id}">${u.email}</a>${u.user_id === me ? html` <span class="muted">(you)</span>` : ''}`,
        roleBadge(u.role),
        time(u.created_at),
      ],
    })),
  });
}

function invitationTable(csrf: string, invitations: ListedInvitation[]): SafeHtml {
  if (invitations.length === 0) return html`<p>No pending invitations.</p>`;
  return dataTable({
    label: 'List of pending invitations',
    columns: [{ head: 'Email' }, { head: 'Role' }, { head: 'Invited by' }, { head: 'Expires' }, { head: 'Actions', hiddenHead: true }],
    rows: invitations.map((i) => ({
      attrs: html`data-invitation-id="${i.invitation_id}"`,
      cells: [
        i.email,
        roleBadge(i.role),
        i.invited_by === 'admin' ? 'the operator' : i.invited_by.replace(/^console:/, ''),
        time(i.expires_at),
        html`<form method="post" action="${USERS_PATH}/invitations/${i.invitation_id}/revoke" class="inline-form">
  <input type="hidden" name="_csrf" value="${csrf}">
  <button type="submit" class="secondary outline small">Revoke<span class="visually-hidden"> the invitation of ${i.email}</span></button>
</form>`,
      ],
    })),
  });
}

/** The users list page. */
export function usersView(m: UsersViewModel): SafeHtml {
  return html`<h1>Users</h1>
<p>People who can sign in to this company's console, and what their role lets them do. Owners manage users; a company always keeps at least one owner.</p>
${m.created ? newLinkPanel(m.created) : ''}
<section aria-labelledby="users-title">
  <h2 id="users-title">Users</h2>
  ${userTable(m.users, m.me)}
</section>
<section aria-labelledby="invitations-title">
  <h2 id="invitations-title">Pending invitations</h2>
  ${invitationTable(m.csrf, m.invitations)}
</section>
<section aria-labelledby="invite-title">
  <h2 id="invite-title">Invite a person</h2>
  <form method="post" action="${USERS_PATH}/invitations" class="narrow" novalidate>
    <input type="hidden" name="_csrf" value="${m.csrf}">
    <label for="email">Email</label>
    <input id="email" name="email" type="email" autocomplete="off" required maxlength="254" value="${m.form.email}"${inv(m.errors.email, 'email-error')}>
    ${fieldError(m.errors.email, 'email-error')}
    ${roleFieldset('role', m.form.role, m.errors.role, 'Role')}
    <button type="submit">Create invitation link</button>
  </form>
  <p><small>You get a one-time link to send to the person; it works for 7 days. A new invitation for the same email replaces the old link.</small></p>
</section>`;
}

export interface UserViewModel {
  csrf: string;
  user: ListedUser & { password_changed_at: Date };
  me: number;
  /** The role form's value and error (e.g. the last owner). */
  role: string;
  roleError?: string;
  created?: NewLink;
  history: HistoryEntry[];
}

function historyText(e: HistoryEntry): string {
  const d = (e.details ?? {}) as Record<string, unknown>;
  switch (e.action) {
    case 'user.join': return `Joined as ${String(d.role ?? '')}`;
    case 'user.role_change': return `Role changed from ${String(d.from)} to ${String(d.to)}`;
    case 'user.password_reset_link': return 'Password reset link created';
    case 'user.password_reset': return 'Password set with a reset link';
    case 'user.password_change': return 'Password changed';
    case 'console.sign_in': return 'Signed in';
    case 'console.sign_out': return 'Signed out';
    default: return e.action;
  }
}

function historyTable(history: HistoryEntry[]): SafeHtml {
  if (history.length === 0) return html`<p>Nothing recorded yet.</p>`;
  return dataTable({
    label: 'History of the user',
    columns: [{ head: 'When' }, { head: 'What' }, { head: 'By' }],
    rows: history.map((e) => ({ cells: [time(e.at), historyText(e), e.actor === 'admin' ? 'the operator' : e.actor.replace(/^console:/, '')] })),
  });
}

/** One user's page: facts, role form, reset link, removal link, history. */
export function userView(m: UserViewModel): SafeHtml {
  const u = m.user;
  const self = u.user_id === m.me;
  return html`<h1>${u.email}${self ? html` <small class="muted">(you)</small>` : ''}</h1>
${m.created ? newLinkPanel(m.created) : ''}
<dl class="facts">
  <dt>Role</dt><dd>${roleBadge(u.role)} <span class="muted">${ROLE_SUMMARY[u.role]}</span></dd>
  <dt>Joined</dt><dd>${time(u.created_at)}</dd>
  <dt>Password last set</dt><dd>${time(u.password_changed_at)}</dd>
</dl>
<section aria-labelledby="role-title">
  <h2 id="role-title">Role</h2>
  <form method="post" action="${USERS_PATH}/${u.user_id}/role" class="narrow" novalidate>
    <input type="hidden" name="_csrf" value="${m.csrf}">
    ${roleFieldset('role', m.role, m.roleError, `Role of ${u.email}`)}
    <button type="submit">Save role</button>
  </form>
  ${self ? html`<p><small>If you give yourself another role, you can no longer manage users.</small></p>` : ''}
</section>
<section aria-labelledby="reset-title">
  <h2 id="reset-title">Password reset</h2>
  <p>Create a one-time link with which ${u.email} chooses a new password. It works for ${PASSWORD_RESET_TTL_MS / 60_000} minutes; a newer link replaces it. Using it signs them out everywhere.</p>
  <form method="post" action="${USERS_PATH}/${u.user_id}/reset-link">
    <input type="hidden" name="_csrf" value="${m.csrf}">
    <button type="submit" class="secondary">Create reset link</button>
  </form>
</section>
<section aria-labelledby="remove-title">
  <h2 id="remove-title">Remove</h2>
  <p>${u.email} can no longer sign in; their sessions end at once. What they did stays in the history.</p>
  <p><a href="${USERS_PATH}/${u.user_id}/remove" role="button" class="danger">Remove user…</a></p>
</section>
<section aria-labelledby="history-title">
  <h2 id="history-title">History</h2>
  ${historyTable(m.history)}
</section>`;
}

/** Confirmation before removing a user; `error` when the removal was refused (the last owner). */
export function removeUserView(m: { csrf: string; user: ListedUser; me: number; error?: string }): SafeHtml {
  const u = m.user;
  return html`<article class="narrow" aria-labelledby="remove-title">
  <h1 id="remove-title">Remove ${u.email}?</h1>
  ${m.error ? html`<p id="remove-error" class="error" role="alert">${m.error}</p>` : ''}
  <dl class="facts">
    <dt>Role</dt><dd>${roleBadge(u.role)}</dd>
    <dt>Joined</dt><dd>${time(u.created_at)}</dd>
  </dl>
  <p>${u.user_id === m.me ? 'You will be signed out and cannot sign in again.' : `${u.email} is signed out at once and cannot sign in again.`} To let them back in, invite them again.</p>
  <form method="post" action="${USERS_PATH}/${u.user_id}/remove" class="actions">
    <input type="hidden" name="_csrf" value="${m.csrf}">
    <button type="submit" class="danger"${m.error ? html` aria-describedby="remove-error"` : ''}>Remove user</button>
    <a href="${USERS_PATH}/${u.user_id}" role="button" class="secondary outline">Cancel</a>
  </form>
</article>`;
}
