/**
 * What the console's axe-core tests share (axe.browser.test.ts and axe-signed-in.browser.test.ts, two
 * files so that neither runs longer than 15 s): the server with its data and the list of pages to check
 * ({@link setUpAxePages}), the split of those pages between the two files ({@link axeShare}), and the
 * check itself ({@link checkPagesWithAxe}): 0 serious or critical violations at desktop (1280×800) and
 * phone (390×844) widths; each page is loaded once and checked at the desktop width, then resized to
 * the phone's and checked again. Minor and moderate findings are printed, not failed.
 *
 * The pages are enumerated from the app's GET routes (bench/console-pages.ts), so a page added later is
 * visited without editing the tests; a route with a parameter gets the id of a real row, and a route
 * whose parameter has no id here is returned in `missing` (axe.browser.test.ts fails on it: add the
 * data). The signed-in pages are seen by an owner of a company that has data on every page: contacts
 * (some opted out, some tagged), a segment with members, a dynamic segment (its page, its conditions
 * in the builder), an automation and a campaign (and an archived one), a campaign send and an
 * automation send, failed messages (for the overview's reasons), an event endpoint, a second user, a
 * contacts import; with variants that show more with a query (search results, a tag, the archived
 * list). The pages without a session: sign-in, an invitation, a password reset link.
 */
import assert from 'node:assert/strict';
import type { BrowserContext, Page } from 'playwright-core';
import { consoleGetRoutes, consolePages } from '../../bench/console-pages.ts';
import { ADMIN_TOKEN, eventually, startTestServer, type TestServer } from '../helpers/server.ts';
import { AXE_TAGS, axeViolations, ConsoleClient, invite, newUser, PASSWORD, withScreenshotOnFailure } from './helpers.ts';
import { insertBatchAt } from './overview-data.ts';

const TAGS = [...AXE_TAGS, 'wcag22aa'];

/** The widths every page is checked at: desktop, and a phone's. */
export const VIEWPORTS = [{ width: 1280, height: 800 }, { width: 390, height: 844 }] as const;

/** One axe-core finding: the page's path, the rule, its impact and the first five elements. */
interface Finding { page: string; id: string; impact: string; targets: string }

/** Runs axe on the page (test/console/helpers.ts); returns its violations, the first five elements of each. */
async function axe(page: Page, name: string): Promise<Finding[]> {
  return (await axeViolations(page, TAGS)).map((v) => ({ page: name, id: v.id, impact: v.impact, targets: v.targets.slice(0, 5).join(' ') }));
}

/**
 * The server of an axe test file and its pages (paths under /console): `signedInPages` for the owner
 * `ownerEmail` (password {@link PASSWORD}), `anonymousPages` without a session, `missing` the route
 * patterns whose parameter had no id.
 */
export interface AxePages {
  s: TestServer;
  ownerEmail: string;
  signedInPages: string[];
  anonymousPages: string[];
  missing: string[];
}

/**
 * Starts a test server and fills one company with data for every console page (see the module
 * comment); resolves to the server and the pages. The caller closes `s`.
 */
export async function setUpAxePages(): Promise<AxePages> {
  const run = String(Math.floor(Math.random() * 1000)).padStart(3, '0');
  let n = 0;
  const phone = () => `+49152${run}${String(++n).padStart(5, '0')}`;
  const s = await startTestServer();
  await s.service.deps.database.db.deleteFrom('console_login_failures').where('bucket', 'like', 'addr:%').execute();
  // Delivery hours to show on the settings page; start == end is open all day, so the campaign send
  // below completes whatever the time of day (08:00-20:00 left it waiting from 20:00 Berlin time).
  const { companyId, key, keyId } = await s.company({ name: 'Axe & Co', delivery_hours: { start: '08:00', end: '08:00', timezone: 'Europe/Berlin' } });
  // Contacts, a segment with members, an automation and a campaign.
  const phones = Array.from({ length: 12 }, phone);
  await s.admin('PUT', `/admin/companies/${companyId}/contacts`, {
    contacts: phones.map((p, i) => ({ phone: p, first_name: ['Ada', 'Grace', 'Linus'][i % 3], last_name: `Tester ${i}`, opted_out: i % 5 === 4, variables: { city: 'Köln', order_id: `A-${i}` } })),
  });
  const seg = await s.api('/api/segments/create', { key, body: { name: 'Newsletter' } });
  assert.equal(seg.status, 200, seg.text);
  const segmentId = seg.json.segment_id as number;
  const added = await s.api(`/api/segments/${segmentId}/contacts`, { key, body: { contacts: phones, mode: 'add' } });
  assert.equal(added.status, 200, added.text);
  // A dynamic segment (its page and its conditions in the builder) and tags on the contacts.
  const dynamic = await s.admin('POST', `/admin/companies/${companyId}/segments`, { name: 'Köln readers', filter: { all: [{ attribute: 'city', op: 'eq', value: 'Köln' }, { not: { tag: 'vip' } }, { message: 'read', within: '30d' }, { segment: segmentId }] } }, 201);
  await s.admin('POST', `/admin/companies/${companyId}/contacts/tags`, { contacts: phones.slice(0, 6), add: ['vip', 'spring sale'] });
  const automation = await s.admin('POST', `/admin/companies/${companyId}/automations`, { name: 'Order shipped', type: 'api', active: true, template: { body: 'Hi {{ first_name }}, your order {{ order_id }} is on its way', buttons: [{ text: 'Track', url: 'https://shop.example/track' }] } }, 201);
  const campaign = await s.admin('POST', `/admin/companies/${companyId}/campaigns`, { name: 'Spring sale', template: { body: '{{ first_name }}, spring is here' } }, 201);
  // An archived campaign: the archived list (with its Restore button) and its page.
  const archived = await s.admin('POST', `/admin/companies/${companyId}/campaigns`, { name: 'Winter sale', template: { body: 'Winter' } }, 201);
  await s.admin('DELETE', `/admin/campaigns/${archived.campaign_id}`, undefined, 200);
  // Sends: a campaign to the segment, an automation trigger; then failures for the overview.
  const send = await s.admin('POST', `/admin/campaigns/${campaign.campaign_id}/sends`, { segment_id: segmentId });
  const batchId = send.batch_id as string;
  const trigger = await s.api('/api/automations/send', { key, body: { automation_id: automation.automation_id, contacts: [{ phone: phones[0] }] } });
  assert.equal(trigger.status, 200, trigger.text);
  await eventually(async () => (await s.admin('GET', `/admin/batches/${batchId}`)).status === 'completed');
  await insertBatchAt(s, companyId, new Date(Date.now() - 2 * 86_400_000).toISOString(), [
    { status: 'failed', error: 'Message undeliverable (HTTP 400)', error_code: '131026' }, { status: 'failed', error: 'HTTP 503', error_code: '503' },
    { status: 'skipped', reason: 'invalid_phone' }, { status: 'read' }, { status: 'delivered' },
  ]);
  const endpoint = await s.admin('POST', `/admin/companies/${companyId}/event-endpoints`, { url: 'http://127.0.0.1:9/events', events: ['batch.completed'], description: 'Warehouse' });
  // People: the owner, a second user (with a reset link), an open invitation.
  const ownerEmail = await newUser(s, companyId);
  const secondEmail = await newUser(s, companyId);
  const second = await s.service.deps.database.db.selectFrom('console_users').select('user_id').where('email', '=', secondEmail).executeTakeFirstOrThrow();
  const owner = new ConsoleClient(s.url);
  await owner.signIn(ownerEmail);
  const usersPage = `/console/settings/users/${second.user_id}`;
  await owner.submit(usersPage, `${usersPage}/reset-link`, {});
  const resetToken = /\/console\/password-reset\/([A-Za-z0-9_-]+)/.exec((await owner.get(usersPage)).text)?.[1];
  const open = await invite(s, companyId, `open-${run}-${Date.now()}@example.com`);
  // A contacts CSV import (its progress page).
  const imported = await fetch(`${s.url}/admin/companies/${companyId}/contact-imports`, {
    method: 'POST', headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'text/csv' }, body: `phone,first_name\n${phone()},Radia\nnot a number,Ken\n`,
  });
  assert.equal(imported.status, 202, await imported.clone().text());
  const importId = String(((await imported.json()) as { import_id: number }).import_id);

  const ids: Record<string, string> = {
    'automations/id': String(automation.automation_id), 'campaigns/id': String(campaign.campaign_id),
    segmentId: String(segmentId), keyId: String(keyId), endpointId: String(endpoint.endpoint_id ?? endpoint.id),
    batchId, key: phones[1], userId: String(second.user_id), importId,
    '/console/segments/:segmentId/filter#segmentId': String(dynamic.segment_id),
    'invite/token': new URL(open.invite_url).pathname.split('/').pop()!,
    ...(resetToken ? { 'password-reset/token': resetToken } : {}),
  };
  const listed = consolePages(consoleGetRoutes(s.service.app), ids);
  const anonymousPages = listed.pages.filter((p) => /^\/console\/(login|invite\/|password-reset\/)/.test(p));
  const signedInPages = listed.pages.filter((p) => !anonymousPages.includes(p));
  // Variants of pages that show more with a query: search results, a contact by id, a second page.
  signedInPages.push(`/console/sends?phone=${phones[1].slice(-6)}`, `/console/contacts?q=${phones[1].slice(-6)}`, '/console/contacts?q=Ada',
    '/console/contacts?tag=vip', `/console/segments/${dynamic.segment_id}`, '/console/campaigns?archived=true', `/console/campaigns/${archived.campaign_id}`);
  return { s, ownerEmail, signedInPages, anonymousPages, missing: listed.missing };
}

/**
 * The pages one of the two test files checks: file 1 (axe.browser.test.ts) every page without a
 * session and the first signed-in pages, file 2 (axe-signed-in.browser.test.ts) the rest of the
 * signed-in pages, so that each checks about half of all the pages and the two together every page
 * once. The split is on the list's order, which is the same in both files' servers.
 */
export function axeShare(pages: AxePages, file: 1 | 2): { anonymous: string[]; signedIn: string[] } {
  const total = pages.anonymousPages.length + pages.signedInPages.length;
  const firstSignedIn = Math.max(0, Math.ceil(total / 2) - pages.anonymousPages.length);
  return file === 1
    ? { anonymous: pages.anonymousPages, signedIn: pages.signedInPages.slice(0, firstSignedIn) }
    : { anonymous: [], signedIn: pages.signedInPages.slice(firstSignedIn) };
}

/**
 * Checks the pages with axe-core in one page of `context` (prepared by test/console/helpers.ts axeOnEveryPage):
 * first `anonymous` without a session, then, after signing in as `pages.ownerEmail` in the browser,
 * `signedIn` with every `<details>` opened; each at both {@link VIEWPORTS}. Prints the minor and
 * moderate findings and the count per width; fails on a page that did not answer 200 and on any
 * serious or critical finding (a screenshot on failure: test/console/helpers.ts).
 */
export async function checkPagesWithAxe(context: BrowserContext, pages: AxePages, share: { anonymous: string[]; signedIn: string[] }): Promise<void> {
  const { s, ownerEmail } = pages;
  // Each page is loaded once and checked at both widths: at the desktop width, then resized to the
  // phone's (the layout follows the viewport; nothing the server sends depends on it).
  const page = await context.newPage();
  const findings: { width: number; finding: Finding }[] = [];
  const notOk: string[] = [];
  /** Loads `p` at the desktop width (noting a status other than 200), opens its <details> if asked, checks it at both widths. */
  const visit = async (p: string, openDetails: boolean) => {
    await page.setViewportSize(VIEWPORTS[0]);
    const res = await page.goto(s.url + p);
    if (res?.status() !== 200) notOk.push(`${p}: ${res?.status()}`);
    // Open every <details> so what it hides is checked too.
    if (openDetails) await page.evaluate(() => { for (const d of document.querySelectorAll('details')) d.open = true; });
    for (const viewport of VIEWPORTS) {
      await page.setViewportSize(viewport);
      for (const f of await axe(page, p)) findings.push({ width: viewport.width, finding: f });
    }
  };
  await withScreenshotOnFailure(page, 'axe', async () => {
    await context.clearCookies();
    for (const p of share.anonymous) await visit(p, false);
    await page.setViewportSize(VIEWPORTS[0]);
    await page.goto(`${s.url}/console/login`);
    await page.getByLabel('Email').fill(ownerEmail);
    await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(/\/console\/(?!login)/);
    for (const p of share.signedIn) await visit(p, true);
  });
  await page.close();
  const isBlocking = (f: Finding) => f.impact === 'serious' || f.impact === 'critical';
  for (const { width } of VIEWPORTS) {
    const other = findings.filter((f) => f.width === width && !isBlocking(f.finding)).map((f) => f.finding);
    if (other.length) console.log(`# ${width}px minor/moderate:\n${other.map((f) => `#   ${f.page}: ${f.id} (${f.impact}) ${f.targets}`).join('\n')}`);
    console.log(`# ${width}px: ${share.anonymous.length + share.signedIn.length} pages checked`);
  }
  assert.deepEqual(notOk, [], 'pages that did not answer 200');
  const blocking = findings.filter((f) => isBlocking(f.finding));
  assert.deepEqual(blocking.map(({ width, finding: f }) => `${width}px ${f.page}: ${f.id} (${f.impact}) ${f.targets}`), [], 'serious or critical violations');
}
