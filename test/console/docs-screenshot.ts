/**
 * Regenerates docs/console.png (the README's console screenshot): starts the service on a fresh
 * database, sets up a company with keys and a send, signs in with Chromium and photographs
 * Settings › Integrations & developers › Credentials right after a key was created.
 *
 *   node test/console/docs-screenshot.ts [output.png] [--pages DIR]
 *
 * `--pages DIR` also saves every console page, wide and phone-sized, into DIR (for reviewing the look).
 * Not a test (no `.test.ts`): `npm test` does not run it.
 */
import path from 'node:path';
import fs from 'node:fs';
import { eventually, startTestServer } from '../helpers/server.ts';
import { browserSkipReason, invite, launchBrowser, PASSWORD } from './helpers.ts';

const args = process.argv.slice(2);
const pagesAt = args.indexOf('--pages');
const pagesDir = pagesAt >= 0 ? args.splice(pagesAt, 2)[1] : undefined;
const out = path.resolve(args[0] ?? 'docs/console.png');
const skip = browserSkipReason();
if (skip) throw new Error(skip);

const s = await startTestServer();
const browser = await launchBrowser({ viewport: { width: 1200, height: 860 } });
try {
  const c = await s.company({ name: 'Acme Shoes' });
  await s.admin('PUT', `/admin/companies/${c.companyId}/connector`, { connected: true, provider: 'pushy' });
  await s.admin('PUT', `/admin/companies/${c.companyId}/contacts`, { contacts: [{ phone: '+4915112345678', first_name: 'Ada' }, { phone: '+4915112345679', first_name: 'Grace' }] });
  await s.api('/api/segments/create', { key: c.key, body: { name: 'Newsletter' } });
  const seg = await s.api('/api/segments/create', { key: c.key, body: { name: 'VIP customers' } });
  await s.api(`/api/segments/${seg.json.segment_id}/contacts`, { key: c.key, body: { contacts: ['+4915112345678', '+4915112345679'], mode: 'add' } });
  const automation = await s.admin('POST', `/admin/companies/${c.companyId}/automations`, { name: 'Order shipped', type: 'api', active: true, template: { body: 'Hi {{ first_name }}', buttons: [] } });
  const sent = await s.api('/api/automations/send', { key: c.key, body: { automation_id: automation.automation_id, contacts: [{ phone: '+4915112345678', first_name: 'Ada' }, { phone: '+4915112345679' }, { phone: '12' }] } });
  await eventually(async () => (await s.admin('GET', `/admin/batches/${sent.json.batch_id}`)).status === 'completed', 30_000, 200);
  await s.admin('POST', `/admin/companies/${c.companyId}/api-keys`, { label: 'old CRM sync' }).then((k) => s.admin('DELETE', `/admin/api-keys/${k.key_id}`));
  await s.service.deps.auth.flush();

  const inv = await invite(s, c.companyId, 'ada@acme.example');
  const page = await browser.context.newPage();
  await page.goto(inv.invite_url);
  await page.getByLabel('New password').fill(PASSWORD);
  await page.getByLabel('Repeat the password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Create account' }).click();
  await page.getByLabel('Email').fill('ada@acme.example');
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(/credentials$/);
  await page.getByLabel(/^Label/).fill('shop integration');
  await page.getByRole('button', { name: 'Create API key' }).click();
  await page.getByRole('heading', { name: /Your new API key/ }).waitFor();
  fs.mkdirSync(path.dirname(out), { recursive: true });
  await page.screenshot({ path: out, fullPage: true });
  console.log(`wrote ${out}`);

  if (pagesDir) {
    fs.mkdirSync(pagesDir, { recursive: true });
    const db = s.service.deps.database.db;
    const key = await db.selectFrom('api_keys').select('key_id').where('company_id', '=', c.companyId).where('revoked_at', 'is', null).executeTakeFirstOrThrow();
    const paths = ['/console/settings/integrations/credentials', `/console/settings/integrations/credentials/${key.key_id}/revoke`, '/console/segments',
      `/console/segments/${seg.json.segment_id}`, '/console/sends', `/console/sends/${sent.json.batch_id}`, '/console/sends?phone=0151%2012345678', '/console/account/password'];
    for (const [w, h, tag] of [[1200, 860, 'wide'], [375, 740, 'phone']] as const) {
      await page.setViewportSize({ width: w, height: h });
      for (const p of paths) {
        await page.goto(s.url + p);
        const name = p.replace(/^\/console\//, '').replace(/[^a-z0-9]+/gi, '-').slice(0, 60);
        await page.screenshot({ path: path.join(pagesDir, `${tag}-${name}.png`), fullPage: true });
      }
    }
    await browser.context.clearCookies();
    await page.goto(`${s.url}/console/login`);
    await page.screenshot({ path: path.join(pagesDir, 'phone-login.png'), fullPage: true });
    console.log(`wrote pages to ${pagesDir}`);
  }
} finally {
  await browser.close();
  await s.close();
}
