/**
 * Screenshots of the Contacts pages into docs/console/ (or DIR), wide (1280 px) and
 * phone-sized (360 px): the list, a search by name, a contact's page (variables, segments, history,
 * messages, replies), an edit refused beside the field, the import form, a finished import with rows
 * not imported, and the erase confirmation.
 *
 *   node test/console/contacts-screenshots.ts [DIR]
 *
 * Starts the service on a fresh embedded database with a fake clock. Not a test.
 */
import fs from 'node:fs';
import path from 'node:path';
import { eventually, FakeClock, startTestServer } from '../helpers/server.ts';
import { browserSkipReason, launchBrowser, newUser, PASSWORD, takeScreenshots } from './helpers.ts';

const dir = path.resolve(process.argv[2] ?? 'docs/console');
const skip = browserSkipReason();
if (skip) throw new Error(skip);
fs.mkdirSync(dir, { recursive: true });

const s = await startTestServer({ clock: new FakeClock(Date.parse('2026-06-01T10:00:00Z')) });
const browser = await launchBrowser({ viewport: { width: 1280, height: 900 } });
try {
  const c = await s.company({ name: 'Acme Shoes' });
  const ada = '+4915112345678';
  const names = ['Grace Hopper', 'Alan Turing', 'Katherine Johnson', 'Edsger Dijkstra', 'Barbara Liskov', 'Donald Knuth', 'Frances Allen'];
  await s.admin('PUT', `/admin/companies/${c.companyId}/contacts`, { contacts: [
    { phone: ada, first_name: 'Ada', last_name: 'Lovelace', variables: { city: 'London', size: '38' } },
    { phone: '+4915112345600', first_name: 'Adam', last_name: 'Smith', opted_out: true },
    ...names.map((n, i) => ({ phone: `+49151123456${String(10 + i)}`, first_name: n.split(' ')[0], last_name: n.split(' ')[1] })),
  ] });
  const seg = await s.api('/api/segments/create', { key: c.key, body: { name: 'VIP customers' } });
  await s.api(`/api/segments/${seg.json.segment_id}/contacts`, { key: c.key, body: { contacts: [ada], mode: 'add' } });
  const auto = await s.admin('POST', `/admin/companies/${c.companyId}/automations`, { name: 'Order shipped', type: 'api', active: true, template: { body: 'Your order is on its way to {{ city }}.' } });
  const sent = await s.api('/api/automations/send', { key: c.key, body: { automation_id: auto.automation_id, contacts: [{ phone: ada }] } });
  await eventually(async () => (await s.admin('GET', `/admin/batches/${sent.json.batch_id}`)).status === 'completed');
  const contact = await s.admin('GET', `/admin/companies/${c.companyId}/contacts/${encodeURIComponent(ada)}`);
  await s.service.deps.database.db.insertInto('inbound_messages').values({ company_id: c.companyId, contact_id: contact.contact_id, provider_message_id: 'wamid.demo1', type: 'text', text: 'Thanks, can I change the address?', payload: null, received_at: new Date('2026-06-01T09:40:00Z') }).execute();
  await s.admin('PATCH', `/admin/companies/${c.companyId}/contacts/${encodeURIComponent(ada)}`, { variables: { city: 'London', size: '38', tier: 'gold' } });
  const csv = ['phone;first_name;city', ...Array.from({ length: 120 }, (_, i) => `+4916012345${String(100 + i)};Customer ${i};Berlin`), '12345;Nobody;Nowhere', '+4916012345999;Too;many;fields'].join('\n');
  const imp = await fetch(`${s.url}/admin/companies/${c.companyId}/contact-imports?filename=spring-fair.csv`, { method: 'POST', headers: { authorization: 'Bearer test-admin-token-4Jx9qLw2Zr7Vb5Nc', 'content-type': 'text/csv' }, body: csv });
  const importId = ((await imp.json()) as { import_id: number }).import_id;
  await eventually(async () => (await s.admin('GET', `/admin/companies/${c.companyId}/contact-imports/${importId}`)).status === 'completed');

  const page = await browser.context.newPage();
  const email = await newUser(s, c.companyId);
  await page.goto(`${s.url}/console/login`);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(/\/console\/(?!login)/);

  const contactUrl = `${s.url}/console/contacts/${encodeURIComponent(ada)}`;
  const shots: [string, () => Promise<unknown>][] = [
    ['contacts', () => page.goto(`${s.url}/console/contacts`)],
    ['contacts-search', () => page.goto(`${s.url}/console/contacts?q=ada`)],
    ['contact', () => page.goto(contactUrl)],
    ['contact-edit-error', async () => {
      await page.goto(contactUrl);
      await page.getByLabel('Name 4').fill('shoe size');
      await page.getByLabel('Value 4').fill('38');
      await page.getByRole('button', { name: 'Save changes' }).click();
      await page.locator('#variables-error').waitFor();
    }],
    ['contacts-import', () => page.goto(`${s.url}/console/contacts/import`)],
    ['contacts-import-progress', () => page.goto(`${s.url}/console/contacts/imports/${importId}`)],
    ['contact-erase', () => page.goto(`${contactUrl}/erase`)],
  ];
  await takeScreenshots(page, dir, shots);
  console.log(`screenshots in ${dir}`);
} finally {
  await browser.close();
  await s.close();
}
