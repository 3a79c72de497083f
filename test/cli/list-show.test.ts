/**
 * The CLI's read commands (list and show), through the real `cms` process and the real server on the typed
 * client: `company list|show`, `key list` (never the key), `automation list|show`, `campaign list|show`, and
 * `batch show --messages` with the text each message was rendered to. A non-numeric id is a usage error (exit
 * 2) before any request; another company's automation answers as an unknown one.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { runCli } from './helpers.ts';
import { ADMIN_TOKEN, eventually, startTestServer, type TestServer } from '../helpers/server.ts';

let s: TestServer;
before(async () => {
  s = await startTestServer();
});
after(() => s.close());

const cms = (...args: string[]) => runCli(args, { env: { CMS_URL: s.url, ADMIN_TOKEN } });

/** Runs `cms ... --json`, expects exit 0 and returns the parsed output. */
async function cmsJson(...args: string[]): Promise<any> {
  const r = await cms(...args, '--json');
  assert.equal(r.code, 0, r.stderr);
  return JSON.parse(r.stdout);
}

const template = (body: string) => ({ header: { type: 'text', text: 'Acme Shoes' }, body, buttons: [{ type: 'url', text: 'Track', url: 'https://acme.example/track' }] });

test('company list and show', async () => {
  const { companyId } = await s.company({ name: 'Listed Shoes', default_country: 'DE' });
  const { companies } = await cmsJson('company', 'list');
  assert.ok(companies.some((c: any) => c.company_id === companyId && c.name === 'Listed Shoes'));

  const text = await cms('company', 'list');
  assert.equal(text.code, 0, text.stderr);
  assert.match(text.stdout, new RegExp(`^${companyId}\\tListed Shoes\\ttrue\\tDE(\\t|$)`, 'm'));

  const shown = await cms('company', 'show', String(companyId));
  assert.equal(shown.code, 0, shown.stderr);
  assert.match(shown.stdout, new RegExp(`^Company ${companyId}:`));
  assert.match(shown.stdout, /^name\tListed Shoes$/m);
  assert.equal((await cmsJson('company', 'show', String(companyId))).default_country, 'DE');
});

test('key list shows prefixes and labels, never a key', async () => {
  const { companyId, key, keyId } = await s.company();
  const { keys } = await cmsJson('key', 'list', '--company', String(companyId));
  assert.deepEqual(keys.map((k: any) => [k.key_id, k.label, k.revoked_at]), [[keyId, 'test', null]]);
  assert.ok(key.startsWith(keys[0].prefix));

  const text = await cms('key', 'list', '--company', String(companyId));
  assert.equal(text.code, 0, text.stderr);
  assert.match(text.stdout, new RegExp(`^${keyId}\\t${keys[0].prefix.replace(/[$^.*+?()[\]{}|\\]/g, '\\$&')}\\ttest(\\t|$)`, 'm'));
  assert.ok(!text.stdout.includes(key), 'the key itself is never listed');
});

test('automation and campaign list and show; another company sees neither', async () => {
  const { companyId } = await s.company();
  const auto = await s.admin('POST', `/admin/companies/${companyId}/automations`, { name: 'Shipped', type: 'api', active: true, template: template('Hi {{ first_name }}, your order has shipped.') });
  const camp = await s.admin('POST', `/admin/companies/${companyId}/campaigns`, { name: 'Spring sale', template: template('Spring sale:   20 % off\nall week') });

  const autos = await cmsJson('automation', 'list', '--company', String(companyId));
  assert.deepEqual(autos.map((a: any) => [a.id, a.name, a.active]), [[auto.automation_id, 'Shipped', true]]);
  const autoText = await cms('automation', 'list', '--company', String(companyId));
  assert.match(autoText.stdout, /^\d+\tShipped\tapi\ttrue\tHi \{\{ first_name \}\}, your order has shipped\.(\t|$)/m);

  const shown = await cms('automation', 'show', String(auto.automation_id));
  assert.equal(shown.code, 0, shown.stderr);
  assert.match(shown.stdout, new RegExp(`^Automation ${auto.automation_id}:`));
  const templateJson = shown.stdout.slice(shown.stdout.indexOf('Template:\n') + 'Template:\n'.length);
  assert.equal(JSON.parse(templateJson).body, 'Hi {{ first_name }}, your order has shipped.');

  const camps = await cmsJson('campaign', 'list', '--company', String(companyId));
  assert.deepEqual(camps.map((c: any) => [c.id, c.name]), [[camp.campaign_id, 'Spring sale']]);
  const campText = await cms('campaign', 'list', '--company', String(companyId));
  assert.match(campText.stdout, /^\d+\tSpring sale\tSpring sale: 20 % off all week(\t|$)/m);
  assert.equal((await cmsJson('campaign', 'show', String(camp.campaign_id))).template.body, 'Spring sale:   20 % off\nall week');

  const other = await s.company();
  assert.deepEqual(await cmsJson('automation', 'list', '--company', String(other.companyId)), []);
  const empty = await cms('campaign', 'list', '--company', String(other.companyId));
  assert.equal(empty.stdout, 'id\tname\tbody\tcreated_at\n', 'no campaigns: the header line only');
  const missing = await cms('automation', 'show', '999999999');
  assert.equal(missing.code, 1);
  assert.match(missing.stderr, /^cms: error: not found \(HTTP 404\)/m);
});

test('batch show --messages prints the rendered text', async () => {
  const { companyId, key } = await s.company();
  const auto = await s.admin('POST', `/admin/companies/${companyId}/automations`, { name: 'Shipped', type: 'api', active: true, template: template('Hi {{ first_name }},\nyour order has shipped.') });
  const sent = await s.api('/api/automations/send', { key, body: { automation_id: auto.automation_id, contacts: [{ phone: '+4915112345678', first_name: 'Ada' }] } });
  assert.equal(sent.status, 200, sent.text);
  const batchId: string = sent.json.batch_id;
  await eventually(async () => (await s.admin('GET', `/admin/batches/${batchId}`)).status === 'completed');

  const r = await cms('batch', 'show', batchId, '--messages');
  assert.equal(r.code, 0, r.stderr);
  const rendered = r.stdout.slice(r.stdout.indexOf('Rendered text:'));
  assert.match(rendered, /^Rendered text:\n {2}\S+ to \+4915112345678:\n {4}Acme Shoes\n\n {4}Hi Ada,\n {4}your order has shipped\.\n {4}\[Track\]\(https:\/\/acme\.example\/track\)\n$/);
});

test('an id that is not a whole number is a usage error, sent nowhere', async () => {
  for (const args of [['company', 'show', 'acme'], ['automation', 'show', '1.5'], ['key', 'list', '--company', 'x1']]) {
    const r = await cms(...args);
    assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, /^cms: error: (company|automation) id must be a whole number, got "[^"]+"$/m);
  }
});
