/**
 * `cms whatsapp templates sync|list|submit`, `cms channel resume` and the WhatsApp flags of
 * `cms channel set` (--waba-id, --throughput, --messaging-limit) against a real server and the fake
 * Graph API.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { pauseChannel } from '../../src/db/whatsapp-channel.ts';
import { graphTemplate, startFakeGraph, type FakeGraph } from '../helpers/fake-graph.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { whatsappCompany } from '../helpers/whatsapp.ts';
import { cliFor, type CliRunner } from './helpers.ts';

let s: TestServer;
let graph: FakeGraph;
let cms: CliRunner;

before(async () => {
  s = await startTestServer({ role: 'api' });
  graph = await startFakeGraph();
  cms = cliFor(s);
});
after(async () => {
  await s.close();
  await graph.close();
});

test('channel set with --waba-id, --throughput and --messaging-limit; templates sync, list and submit', async () => {
  const c = await whatsappCompany(s, graph, { noSync: true, templates: [graphTemplate('spring_sale', 'de', { status: 'REJECTED', rejected_reason: 'PROMOTIONAL', body: 1 })] });
  const set = await cms.json(['channel', 'set', '--company', String(c.companyId), '--provider', 'whatsapp', '--phone-number-id', c.phoneNumberId,
    '--access-token', c.accessToken, '--api-base-url', graph.baseUrl, '--waba-id', c.wabaId, '--throughput', '120', '--messaging-limit', 'unlimited']);
  assert.deepEqual([set.channel.waba_id, set.channel.throughput_per_second, set.channel.messaging_limit], [c.wabaId, 120, null]);

  const synced = await cms(['whatsapp', 'templates', 'sync', '--company', String(c.companyId)]);
  assert.equal(synced.code, 0, synced.stderr);
  assert.match(synced.stdout, new RegExp(`company ${c.companyId} has ${graph.templates.get(c.wabaId)!.length} WhatsApp templates`));

  const listed = await cms(['whatsapp', 'templates', 'list', '--company', String(c.companyId)]);
  assert.equal(listed.code, 0, listed.stderr);
  assert.match(listed.stdout, /spring_sale.*de.*REJECTED.*UTILITY/);
  assert.match(listed.stdout, /PROMOTIONAL/);
  assert.match(listed.stdout, /order_shipped.*header image, body 2, buttons \[1, 1\]/);
  const json = await cms.json(['whatsapp', 'templates', 'list', '--company', String(c.companyId)]);
  assert.equal(json.templates.length, graph.templates.get(c.wabaId)!.length);

});

test('submit reads the components file (or stdin); bad input is a usage error before any request', async () => {
  const c = await whatsappCompany(s, graph);
  const components = [{ type: 'BODY', text: 'Hallo {{1}}, Ihre Bestellung {{2}} ist unterwegs.', example: { body_text: [['Ada', 'A-1']] } }];
  const r = await cms(['--json', 'whatsapp', 'templates', 'submit', '--company', String(c.companyId), '--name', 'order_de', '--language', 'de',
    '--category', 'UTILITY', '--components', '-'], { stdin: JSON.stringify(components) });
  assert.equal(r.code, 0, r.stderr);
  const t = JSON.parse(r.stdout);
  assert.deepEqual([t.name, t.status, t.parameters], ['order_de', 'PENDING', { header: 0, body: 2, buttons: [] }]);
  const post = graph.requests.filter((x) => x.kind === 'templates' && x.method === 'POST' && x.wabaId === c.wabaId);
  assert.deepEqual(post.map((x) => x.body), [{ name: 'order_de', language: 'de', category: 'UTILITY', components }]);

  const notArray = await cms(['whatsapp', 'templates', 'submit', '--company', String(c.companyId), '--name', 'x', '--language', 'de', '--category', 'UTILITY', '--components', '-'], { stdin: '{"type":"BODY"}' });
  assert.equal(notArray.code, 1);
  assert.match(notArray.stderr, /must hold a JSON array/);
  const badCategory = await cms(['whatsapp', 'templates', 'submit', '--company', String(c.companyId), '--name', 'x', '--language', 'de', '--category', 'PROMO', '--components', '-'], { stdin: '[]' });
  assert.equal(badCategory.code, 2);
  for (const [flag, value] of [['--throughput', '0'], ['--messaging-limit', '300'], ['--waba-id', 'abc']]) {
    const bad = await cms(['channel', 'set', '--company', String(c.companyId), '--provider', 'whatsapp', '--phone-number-id', '1', '--access-token', 't', flag, value]);
    assert.equal(bad.code, 2, `${flag} ${value}`);
    assert.match(bad.stderr, new RegExp(flag));
  }
  const stray = await cms(['channel', 'set', '--company', String(c.companyId), '--provider', 'outbox', '--waba-id', '1']);
  assert.equal(stray.code, 2);
  assert.equal(graph.requests.filter((x) => x.kind === 'templates' && x.method === 'POST' && x.wabaId === c.wabaId).length, 1, 'nothing more reached Meta');

  const refused = await cms(['whatsapp', 'templates', 'sync', '--company', String((await s.company()).companyId)]);
  assert.equal(refused.code, 1);
  assert.match(refused.stderr, /not WhatsApp/);
});

test('channel resume sets a paused channel active; 409 for a channel that is not WhatsApp', async () => {
  const c = await whatsappCompany(s, graph);
  await pauseChannel(s.service.deps.database.db, c.companyId, '368: account restricted', Date.now());
  assert.equal((await s.admin('GET', `/admin/companies/${c.companyId}`)).channel.state, 'paused');
  const r = await cms(['channel', 'resume', '--company', String(c.companyId)]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /state\s+.*active/);
  assert.equal((await s.admin('GET', `/admin/companies/${c.companyId}`)).channel.state, 'active');
  const outbox = await s.company();
  const refused = await cms(['channel', 'resume', '--company', String(outbox.companyId)]);
  assert.equal(refused.code, 1);
  assert.match(refused.stderr, /not WhatsApp/);
});

test('automation and campaign --expire-after: a duration or none; the server refuses a bad one', async () => {
  const { companyId } = await s.company();
  const a = await cms.json(['automation', 'create', '--company', String(companyId), '--name', 'a', '--body', 'Hi', '--expire-after', '2h']);
  assert.equal(a.expire_after, '2h');
  assert.equal((await cms.json(['automation', 'update', String(a.automation_id), '--expire-after', 'none'])).expire_after, null);
  const plain = await cms.json(['automation', 'create', '--company', String(companyId), '--name', 'b', '--body', 'Hi']);
  assert.equal(plain.expire_after, null);
  assert.equal((await cms.json(['campaign', 'create', '--company', String(companyId), '--name', 'c', '--body', 'Hi'])).expire_after, '24h');
  assert.equal((await cms.json(['campaign', 'create', '--company', String(companyId), '--name', 'd', '--body', 'Hi', '--expire-after', '2d'])).expire_after, '2d');
  const bad = await cms(['automation', 'create', '--company', String(companyId), '--name', 'e', '--body', 'Hi', '--expire-after', 'soon']);
  assert.equal(bad.code, 1);
  assert.match(bad.stderr, /expire_after/);
});
