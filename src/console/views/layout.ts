/**
 * The page frame of the console: document head (bundled CSS/JS only, no CDN), skip link, main
 * navigation with the current page marked (`aria-current`), breadcrumbs, flash message, sign-out form.
 * Pages without a session (sign-in, invitation, errors before sign-in) get the frame without navigation.
 * The navigation lists only the pages the user's role may open (permissions.ts): Users for owners,
 * Credentials and Webhooks not for marketers, Templates only when the company's channel is WhatsApp; a
 * section the role may only read says so above the page.
 */
import type { Role } from '../../domain/users.ts';
import { isAllowed, mayOpen } from '../permissions.ts';
import { html, type SafeHtml } from './html.ts';

/** Where the console lives. */
export const BASE = '/console';

/** The sections of the main navigation. */
export type Section = 'overview' | 'users' | 'credentials' | 'webhooks' | 'automations' | 'campaigns' | 'templates' | 'segments' | 'contacts' | 'sends' | 'account' | 'messaging';

/** Navigation entries; `whatsapp`: shown only when the company's channel is WhatsApp. */
const NAV: { section: Section; href: string; label: string; whatsapp?: boolean }[] = [
  { section: 'overview', href: `${BASE}/overview`, label: 'Overview' },
  { section: 'credentials', href: `${BASE}/settings/integrations/credentials`, label: 'Credentials' },
  { section: 'webhooks', href: `${BASE}/settings/integrations/webhooks`, label: 'Webhooks' },
  { section: 'automations', href: `${BASE}/automations`, label: 'Automations' },
  { section: 'campaigns', href: `${BASE}/campaigns`, label: 'Campaigns' },
  { section: 'templates', href: `${BASE}/whatsapp/templates`, label: 'Templates', whatsapp: true },
  { section: 'segments', href: `${BASE}/segments`, label: 'Segments' },
  { section: 'contacts', href: `${BASE}/contacts`, label: 'Contacts' },
  { section: 'sends', href: `${BASE}/sends`, label: 'Sends' },
  { section: 'users', href: `${BASE}/settings/users`, label: 'Users' },
  { section: 'messaging', href: `${BASE}/settings/messaging`, label: 'Messaging' },
  { section: 'account', href: `${BASE}/account/password`, label: 'Account' },
];

export interface PageUser {
  email: string; company_name: string; role: Role;
  /** The company's channel provider (`whatsapp` adds the Templates entry); absent: not WhatsApp. */
  channel_provider?: string;
}

export interface PageOptions {
  title: string;
  body: SafeHtml;
  /** CSRF token for the sign-out form (and any form of the page). */
  csrf: string;
  /** Signed-in user; absent on pages before sign-in. */
  user?: PageUser;
  section?: Section;
  /** Trail above the heading, last item is the current page: [label, href?][]. */
  crumbs?: [string, string?][];
  /** A one-line notice shown above the body (e.g. "API key revoked."). */
  flash?: string;
  /** Scripts of this page besides console.js: file names under /console/assets/ (deferred). */
  scripts?: string[];
}

function nav(user: PageUser, csrf: string, current?: Section): SafeHtml {
  return html`<header class="container site-header">
  <nav aria-label="Main">
    <ul><li><a class="brand" href="${BASE}/"><strong>CMS console</strong></a> <span class="company">${user.company_name}</span></li></ul>
    <ul class="nav-links">
      ${NAV.filter((n) => mayOpen(user.role, n.href) && (!n.whatsapp || user.channel_provider === 'whatsapp')).map((n) => html`<li><a href="${n.href}"${n.section === current ? html` aria-current="page"` : ''}>${n.label}</a></li>`)}
      <li><form method="post" action="${BASE}/logout" class="inline-form"><input type="hidden" name="_csrf" value="${csrf}"><button type="submit" class="secondary outline small">Sign out</button></form></li>
    </ul>
  </nav>
</header>`;
}

function crumbs(trail: [string, string?][]): SafeHtml {
  return html`<nav aria-label="Breadcrumb" class="crumbs"><ol>${trail.map(([label, href], i) =>
    i === trail.length - 1
      ? html`<li><span aria-current="page">${label}</span></li>`
      : href ? html`<li><a href="${href}">${label}</a></li>` : html`<li><span>${label}</span></li>`)}</ol></nav>`;
}

/** A note on pages the user's role may read but not change (e.g. Campaigns for a developer). */
function readOnlyNote(user: PageUser | undefined, section: Section | undefined): SafeHtml | '' {
  const entry = section && NAV.find((n) => n.section === section);
  if (!user || !entry || !mayOpen(user.role, entry.href) || isAllowed(user.role, 'POST', entry.href)) return '';
  return html`<p class="muted read-only-note" role="note">Read only: your role (${user.role}) can look at this page but not change anything here.</p>`;
}

/** The whole HTML document of a page. */
export function layout(o: PageOptions): SafeHtml {
  return html`<!doctype html>
<html lang="en" data-theme="light">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light">
<title>${o.title} · CMS console</title>
<link rel="stylesheet" href="${BASE}/assets/pico/pico.min.css">
<link rel="stylesheet" href="${BASE}/assets/console.css">
<script src="${BASE}/assets/console.js" defer></script>
${(o.scripts ?? []).map((f) => html`<script src="${BASE}/assets/${f}" defer></script>
`)}
</head>
<body>
<a class="skip-link" href="#main">Skip to content</a>
${o.user ? nav(o.user, o.csrf, o.section) : html`<header class="container site-header"><nav aria-label="Main"><ul><li><strong>CMS console</strong></li></ul></nav></header>`}
<main id="main" class="container" tabindex="-1">
${o.crumbs ? crumbs(o.crumbs) : ''}
${readOnlyNote(o.user, o.section)}
${o.flash ? html`<p class="flash" role="status">${o.flash}</p>` : ''}
${o.body}
</main>
${o.user ? html`<footer class="container"><small>Signed in as ${o.user.email} (${o.user.role}) · ${o.user.company_name}</small></footer>` : ''}
</body>
</html>`;
}
