/**
 * Read-only pages show no buttons the role may not use: through the real server,
 * an owner, a developer and a marketer of a company with one of every object open every console page
 * they may read. On each page, every form (its method and action), every link into the console, and
 * every link that leads to an action (New, Edit, Send, Cancel, Import, Erase, Delete, Remove, Revoke,
 * Manage) must be one the role is allowed (src/console/permissions.ts decides; test/console/roles.test.ts
 * checks that table route by route). Written out by hand below: the owner and the marketer see the
 * change buttons of the messaging pages, the developer sees none of them and the read-only note
 * instead, and still sees the credentials and webhooks forms it may use. The developer's read-only
 * pages have no serious or critical axe-core violations (in Chromium; skipped without it).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { isAllowed } from '../../src/console/permissions.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import {
  browserSkipReason, checkPage, ConsoleClient, freshEmail, insertBatch, invite, launchBrowser, newCompany, newUser, signedInClient, userIdOf,
  withScreenshotOnFailure, type Role,
} from './helpers.ts';

let s: TestServer;
let ids: Record<string, string>;
const clients = new Map<Role, ConsoleClient>();
const ROLES: readonly Role[] = ['owner', 'developer', 'marketer'];

/** A company with one of everything (a batch still sending, so that it can be cancelled). */
async function fixture(): Promise<Record<string, string>> {
  const companyId = await newCompany(s);
  const db = s.service.deps.database.db;
  const key = await s.admin('POST', `/admin/companies/${companyId}/api-keys`, { label: 'buttons' });
  const endpoint = await s.admin('POST', `/admin/companies/${companyId}/event-endpoints`, { url: 'http://127.0.0.1:9/buttons' }, 201);
  const segment = await db.insertInto('segments').values({ company_id: companyId, name: 'buttons segment' }).returning('segment_id').executeTakeFirstOrThrow();
  await s.admin('PUT', `/admin/companies/${companyId}/contacts`, { contacts: [{ phone: '+4915112345678', first_name: 'Ada' }] });
  const automation = await s.admin('POST', `/admin/companies/${companyId}/automations`, { name: 'buttons automation', type: 'api', active: true, template: { body: 'Hi {{ first_name }}' } }, 201);
  const campaign = await s.admin('POST', `/admin/companies/${companyId}/campaigns`, { name: 'buttons campaign', template: { body: 'Sale {{ first_name }}' } }, 201);
  const batchId = await insertBatch(s, companyId, [{ phone: '+4915112345678', status: 'sent' }]);
  await db.updateTable('batches').set({ status: 'processing', completed_at: null }).where('batch_id', '=', batchId).execute();
  await db.updateTable('messages').set({ status: 'pending', sent_at: null }).where('batch_id', '=', batchId).execute();
  const imp = await fetch(`${s.url}/admin/companies/${companyId}/contact-imports`, {
    method: 'POST', headers: { authorization: 'Bearer test-admin-token-4Jx9qLw2Zr7Vb5Nc', 'content-type': 'text/csv' }, body: 'phone,first_name\n+4915112345679,Grace\n',
  });
  assert.equal(imp.status, 202, await imp.clone().text());
  const userId = await userIdOf(s, await newUser(s, companyId, freshEmail('target'), 'developer'));
  await invite(s, companyId, freshEmail('pending'), 'marketer');
  for (const role of ROLES) clients.set(role, await signedInClient(s, companyId, role));
  return {
    companyId: String(companyId), keyId: String(key.key_id), endpointId: String(endpoint.endpoint_id), segmentId: String(segment.segment_id),
    contact: encodeURIComponent('+4915112345678'), batchId, importId: String((await imp.json()).import_id),
    automationId: String(automation.automation_id), campaignId: String(campaign.campaign_id), userId: String(userId),
  };
}

before(async () => {
  s = await startTestServer({ role: 'api' });
  await s.service.deps.database.db.deleteFrom('console_login_failures').where('bucket', 'like', 'addr:%').execute();
  ids = await fixture();
});
after(() => s.close());

/** Every console page with a session, with the fixture's ids. */
function pages(): string[] {
  const i = ids;
  return [
    '/console/overview', '/console/account/password',
    '/console/automations', '/console/automations/new', `/console/automations/${i.automationId}`,
    '/console/campaigns', '/console/campaigns/new', `/console/campaigns/${i.campaignId}`, `/console/campaigns/${i.campaignId}/send`,
    '/console/segments', `/console/segments/${i.segmentId}`, `/console/segments/${i.segmentId}/delete`,
    '/console/contacts', '/console/contacts/import', `/console/contacts/imports/${i.importId}`,
    `/console/contacts/${i.contact}`, `/console/contacts/${i.contact}/erase`,
    '/console/sends', `/console/sends/${i.batchId}`, `/console/sends/${i.batchId}/cancel`,
    '/console/settings/integrations/credentials', `/console/settings/integrations/credentials/${i.keyId}/revoke`,
    '/console/settings/integrations/webhooks', `/console/settings/integrations/webhooks/${i.endpointId}`,
    `/console/settings/integrations/webhooks/${i.endpointId}/remove`,
    '/console/settings/users', `/console/settings/users/${i.userId}`, `/console/settings/users/${i.userId}/remove`,
  ];
}

/** What a page offers: its forms (method, action path) and its links into the console (href path, text). */
interface Offer { forms: { method: string; action: string }[]; links: { href: string; text: string }[]; readOnlyNote: boolean }

const decode = (s: string) => s.replace(/&amp;/g, '&').replace(/&#x2F;|&#47;/g, '/');

function offers(page: string, htmlText: string): Offer {
  const forms = [...htmlText.matchAll(/<form\b([^>]*)>/g)].map(([, attrs]) => ({
    method: (/\bmethod="([^"]*)"/.exec(attrs)?.[1] ?? 'get').toUpperCase(),
    action: decode(/\baction="([^"]*)"/.exec(attrs)?.[1] ?? page).split(/[?#]/)[0],
  }));
  const links = [...htmlText.matchAll(/<a\b[^>]*\bhref="(\/console[^"]*)"[^>]*>([\s\S]*?)<\/a>/g)]
    .map(([, href, inner]) => ({ href: decode(href).split(/[?#]/)[0], text: inner.replace(/<[^>]*>/g, '').trim() }))
    .filter((l) => !l.href.startsWith('/console/assets/'));
  return { forms, links, readOnlyNote: /data-read-only|read-only-note/.test(htmlText) };
}

/** A link that leads to a change: by its target (…/new, …/send, …) or by its words (Edit, Manage, …). */
function isActionLink(l: { href: string; text: string }): boolean {
  return /\/(new|send|cancel|import|erase|delete|remove|revoke)$/.test(l.href)
    || /^(New|Edit|Send|Cancel what|Import|Erase|Delete|Remove|Revoke|Manage)\b/.test(l.text);
}

/** The pages a role may open, fetched once: path → what it offers. */
const seen = new Map<Role, Map<string, Offer>>();
async function offersOf(role: Role): Promise<Map<string, Offer>> {
  const cached = seen.get(role);
  if (cached) return cached;
  const out = new Map<string, Offer>();
  for (const p of pages()) {
    const r = await clients.get(role)!.get(p);
    if (!isAllowed(role, 'GET', p)) {
      assert.equal(r.status, 403, `${role} GET ${p}`);
      continue;
    }
    assert.equal(r.status, 200, `${role} GET ${p}: ${r.text.slice(0, 300)}`);
    out.set(p, offers(p, r.text));
  }
  seen.set(role, out);
  return out;
}

describe('every role sees only the buttons, forms and links it may use', () => {
  for (const role of ROLES) {
    test(`${role}: no form, link or action link to something the role is refused`, async () => {
      const wrong: string[] = [];
      for (const [p, o] of await offersOf(role)) {
        for (const f of o.forms) if (!isAllowed(role, f.method, f.action)) wrong.push(`${p}: form ${f.method} ${f.action}`);
        for (const l of o.links) {
          if (!isAllowed(role, 'GET', l.href)) wrong.push(`${p}: link to ${l.href} ("${l.text}")`);
          else if (isActionLink(l) && !isAllowed(role, 'POST', l.href)) wrong.push(`${p}: action link to ${l.href} ("${l.text}")`);
        }
      }
      assert.deepEqual(wrong, []);
    });
  }
});

/** The change buttons of the messaging pages, by page: [page, kind, method or 'link', target]. */
function messagingActions(): [string, string, string][] {
  const i = ids;
  const a = `/console/automations/${i.automationId}`;
  const c = `/console/campaigns/${i.campaignId}`;
  const k = `/console/contacts/${i.contact}`;
  const g = `/console/segments/${i.segmentId}`;
  return [
    ['/console/automations', 'link', '/console/automations/new'],
    ['/console/automations/new', 'POST', '/console/automations/new'],
    [a, 'POST', a], [a, 'POST', `${a}/active`], [a, 'POST', `${a}/test-send`],
    ['/console/campaigns', 'link', '/console/campaigns/new'], ['/console/campaigns', 'link', `${c}/send`],
    ['/console/campaigns/new', 'POST', '/console/campaigns/new'],
    [c, 'POST', c], [c, 'POST', `${c}/test-send`], [c, 'link', `${c}/send`],
    [`${c}/send`, 'POST', `${c}/send`],
    ['/console/segments', 'POST', '/console/segments'],
    [g, 'POST', `${g}/rename`], [g, 'POST', `${g}/members`], [g, 'link', `${g}/delete`], [`${g}/delete`, 'POST', `${g}/delete`],
    ['/console/contacts', 'link', '/console/contacts/import'],
    ['/console/contacts/import', 'POST', '/console/contacts/import'],
    [k, 'POST', `${k}/edit`], [k, 'POST', `${k}/opt-out`], [k, 'link', `${k}/erase`], [`${k}/erase`, 'POST', `${k}/erase`],
    [`/console/sends/${i.batchId}`, 'link', `/console/sends/${i.batchId}/cancel`],
    [`/console/sends/${i.batchId}/cancel`, 'POST', `/console/sends/${i.batchId}/cancel`],
  ];
}

function offered(o: Offer | undefined, kind: string, target: string): boolean {
  if (!o) return false;
  return kind === 'link' ? o.links.some((l) => l.href === target) : o.forms.some((f) => f.method === kind && f.action === target);
}

test('the owner and the marketer still see every change button of the messaging pages', async () => {
  for (const role of ['owner', 'marketer'] as const) {
    const all = await offersOf(role);
    const missing = messagingActions().filter(([p, kind, target]) => !offered(all.get(p), kind, target)).map((x) => x.join(' '));
    assert.deepEqual(missing, [], role);
    const notes = [...all].filter(([, o]) => o.readOnlyNote).map(([p]) => p);
    assert.deepEqual(notes, [], `${role} sees no read-only note`);
  }
});

test('the developer sees none of them, the read-only note on those pages, and "View" instead of "Edit"', async () => {
  const all = await offersOf('developer');
  const shown = messagingActions().filter(([p, kind, target]) => offered(all.get(p), kind, target)).map((x) => x.join(' '));
  assert.deepEqual(shown, []);
  const withoutNote = [...new Set(messagingActions().map(([p]) => p))].filter((p) => !all.get(p)?.readOnlyNote);
  assert.deepEqual(withoutNote, [], 'the read-only note where the buttons were');
  for (const p of ['/console/automations', '/console/campaigns']) {
    const texts = all.get(p)!.links.map((l) => l.text);
    assert.ok(texts.some((t) => t.startsWith('View')) && !texts.some((t) => t.startsWith('Edit')), `${p}: ${texts.join(', ')}`);
  }
});

test('the developer still sees the credentials and webhooks forms it may use; the marketer does not open those pages', async () => {
  const dev = await offersOf('developer');
  const e = `/console/settings/integrations/webhooks/${ids.endpointId}`;
  for (const [p, kind, target] of [
    ['/console/settings/integrations/credentials', 'POST', '/console/settings/integrations/credentials'],
    ['/console/settings/integrations/webhooks', 'POST', '/console/settings/integrations/webhooks'],
    [e, 'POST', `${e}/rotate`], [e, 'link', `${e}/remove`], [`${e}/remove`, 'POST', `${e}/remove`],
  ]) assert.ok(offered(dev.get(p), kind, target), `developer: ${p} ${kind} ${target}`);
  const marketer = await offersOf('marketer');
  assert.ok(!marketer.has('/console/settings/integrations/credentials') && !marketer.has('/console/settings/users'));
  for (const [p, o] of marketer) assert.ok(!o.links.some((l) => l.href.startsWith('/console/settings/')), `${p} links to settings`);
});

test('the developer\'s read-only pages have no serious axe-core violations', { skip: browserSkipReason(), timeout: 120_000 }, async () => {
  const browser = await launchBrowser();
  try {
    await browser.context.addCookies([...clients.get('developer')!.cookies].map(([name, value]) => ({ name, value, url: s.url })));
    const page = await browser.context.newPage();
    const pagesWithNotes = [...new Set(messagingActions().map(([p]) => p)), `/console/contacts/imports/${ids.importId}`];
    for (const p of pagesWithNotes) {
      await withScreenshotOnFailure(page, `read-only${p}`, async () => {
        const r = await page.goto(s.url + p);
        assert.equal(r?.status(), 200, p);
        await checkPage(page, `developer ${p}`, { seriousOnly: true });
      });
    }
  } finally {
    await browser.close();
  }
});
