/**
 * What each console role may do: the one place that decides. A request is judged by
 * its role, its method and the URL of the route it matched (`request.routeOptions.url`, e.g.
 * `/console/segments/:segmentId`), by URL area:
 *
 * | area (route URL)                                                   | GET / HEAD              | other methods      |
 * |--------------------------------------------------------------------|-------------------------|--------------------|
 * | `/console/` (and `/console`), `/console/overview*`, `/console/account/*`, `/console/logout` | every role       | every role         |
 * | `/console/settings/integrations/*` (credentials, webhooks)         | owner, developer        | owner, developer   |
 * | `/console/automations*`, `/campaigns*`, `/segments*`, `/contacts*`, `/sends*` | every role   | owner, marketer    |
 * | `/console/whatsapp/*` (WhatsApp templates: sync, submit)           | every role              | owner, marketer    |
 * | `/console/settings/users/*`                                        | owner                   | owner              |
 * | anything else                                                      | owner                   | owner              |
 *
 * `x*` matches every URL that starts with `x`; `x/*` matches `x` itself and everything under `x/`.
 * Unknown areas are closed to everyone but owners, so a new page is never opened by mistake. The
 * rules apply to the pages of a signed-in user only (sign-in, invitation and password-reset pages have
 * no session and no role). Enforced by the signed-in scope's hook in plugin.ts (403 page); the layout
 * hides the navigation entries a role may not open with {@link mayOpen}.
 */

import { ROLES, type Role } from '../domain/users.ts';

export { isRole, ROLES, type Role } from '../domain/users.ts';

/** What a role may do, in a few words (shown on the users page and on 403 pages). */
export const ROLE_SUMMARY: Record<Role, string> = {
  owner: 'everything, including users and roles',
  developer: 'credentials and webhooks; everything else read-only',
  marketer: 'automations, campaigns, WhatsApp templates, segments, contacts and sends; no credentials or webhooks',
};

const ALL: readonly Role[] = ROLES;
const OWNER: readonly Role[] = ['owner'];

interface Area {
  /** The route URL pattern: `x*` (prefix) or `x/*` (`x` and below). */
  pattern: string;
  read: readonly Role[];
  write: readonly Role[];
}

/** The areas, first match wins. */
const AREAS: readonly Area[] = [
  { pattern: '/console', read: ALL, write: ALL },
  { pattern: '/console/', read: ALL, write: ALL },
  { pattern: '/console/overview*', read: ALL, write: ALL },
  { pattern: '/console/account/*', read: ALL, write: ALL },
  { pattern: '/console/logout', read: ALL, write: ALL },
  { pattern: '/console/settings/integrations/*', read: ['owner', 'developer'], write: ['owner', 'developer'] },
  { pattern: '/console/settings/users/*', read: OWNER, write: OWNER },
  { pattern: '/console/automations*', read: ALL, write: ['owner', 'marketer'] },
  { pattern: '/console/campaigns*', read: ALL, write: ['owner', 'marketer'] },
  { pattern: '/console/segments*', read: ALL, write: ['owner', 'marketer'] },
  { pattern: '/console/contacts*', read: ALL, write: ['owner', 'marketer'] },
  { pattern: '/console/sends*', read: ALL, write: ['owner', 'marketer'] },
  { pattern: '/console/whatsapp/*', read: ALL, write: ['owner', 'marketer'] },
];

function matches(pattern: string, url: string): boolean {
  if (pattern.endsWith('/*')) {
    const base = pattern.slice(0, -2);
    return url === base || url.startsWith(`${base}/`);
  }
  if (pattern.endsWith('*')) return url.startsWith(pattern.slice(0, -1));
  return url === pattern;
}

/** True for methods that only read (GET, HEAD). */
export function isReadMethod(method: string): boolean {
  return method === 'GET' || method === 'HEAD';
}

/**
 * True when `role` may send `method` to the console route `url` (the route's URL pattern or a concrete
 * path; the query string is ignored). Anything not listed in the table above is for owners only.
 */
export function isAllowed(role: Role, method: string, url: string): boolean {
  const path = url.split('?', 1)[0];
  const area = AREAS.find((a) => matches(a.pattern, path));
  if (!area) return role === 'owner';
  return (isReadMethod(method.toUpperCase()) ? area.read : area.write).includes(role);
}

/** True when `role` may open the page at `href` (a GET): used to hide navigation entries and links. */
export function mayOpen(role: Role, href: string): boolean {
  return isAllowed(role, 'GET', href);
}
