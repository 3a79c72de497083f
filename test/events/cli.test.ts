/**
 * `cms events ...` against the real server (docs/events.md): endpoint add (secret printed
 * once) / list / update / disable / remove / rotate-secret / test, attempts, resend, replay --since
 * (RFC 3339 and a duration), --json everywhere; bad input exits non-zero with the server's message.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { cliFor } from '../cli/helpers.ts';
import { startReceiver, type WebhookReceiver } from '../helpers/receiver.ts';
import { phone, until } from './helpers.ts';

let s: TestServer;
let events: WebhookReceiver;
before(async () => {
  s = await startTestServer();
  events = await startReceiver();
});
after(async () => {
  await s.close();
  await events.close();
});

const cms = (args: string[]) => cliFor(s)(args);

test('cms events: the whole life of an endpoint', async () => {
  const { companyId } = await s.company();
  const path = `/cli-${companyId}`;
  const add = await cms(['events', 'endpoint', 'add', '--company', String(companyId), '--url', events.origin + path, '--events', 'contact.opted_out,contact.opted_in', '--description', 'CRM', '--json']);
  assert.equal(add.code, 0, add.stderr);
  const created = JSON.parse(add.stdout);
  assert.match(created.secret, /^whsec_/);
  assert.deepEqual(created.events, ['contact.opted_out', 'contact.opted_in']);
  events.secretFor(path, created.secret);
  const id = String(created.endpoint_id);

  const human = await cms(['events', 'endpoint', 'add', '--company', String(companyId), '--url', events.origin + '/other']);
  assert.equal(human.code, 0, human.stderr);
  assert.match(human.stdout, /whsec_[A-Za-z0-9+/=]+/);
  assert.match(human.stdout, /Store it now/);
  events.secretFor('/other', /whsec_[A-Za-z0-9+/=]+/.exec(human.stdout)![0]);

  const list = await cms(['events', 'endpoint', 'list', '--company', String(companyId)]);
  assert.equal(list.code, 0, list.stderr);
  assert.match(list.stdout, new RegExp(`cli-${companyId}`));
  assert.ok(!list.stdout.includes('whsec_'), 'no secret in the list');
  const listJson = JSON.parse((await cms(['events', 'endpoint', 'list', '--company', String(companyId), '--json'])).stdout);
  assert.equal(listJson.endpoints.length, 2);

  const upd = await cms(['events', 'endpoint', 'update', id, '--description', '', '--json']);
  assert.equal(upd.code, 0, upd.stderr);
  assert.equal(JSON.parse(upd.stdout).description, null);

  // Events flow; attempts; replay; resend.
  const since = new Date(Date.now() - 1000).toISOString();
  await s.admin('PUT', `/admin/companies/${companyId}/contacts`, { contacts: [{ phone: phone(7, 1), opted_out: true }, { phone: phone(7, 2), opted_out: true }] });
  await until(() => events.delivered(path).size === 2);
  const attempts = await (async () => {
    for (;;) {
      const r = JSON.parse((await cms(['events', 'attempts', id, '--json'])).stdout).attempts;
      if (r.length === 2) return r;
      await new Promise((res) => setTimeout(res, 50));
    }
  })();
  assert.deepEqual(attempts.map((a: any) => a.status_code), [200, 200]);
  const table = await cms(['events', 'attempts', id]);
  assert.match(table.stdout, /contact\.opted_out/);

  const replay = await cms(['events', 'replay', id, '--since', since, '--json']);
  assert.equal(replay.code, 0, replay.stderr);
  assert.equal(JSON.parse(replay.stdout).events, 2);
  await until(() => events.seen.filter((x) => x.path === path).length === 4);
  const replay2 = await cms(['events', 'replay', id, '--since', '1h']);
  assert.equal(replay2.code, 0, replay2.stderr);
  assert.match(replay2.stdout, /2 event\(s\) since/);
  await until(() => events.seen.filter((x) => x.path === path).length === 6);

  const resend = await cms(['events', 'resend', attempts[0].event_id]);
  assert.equal(resend.code, 0, resend.stderr);
  assert.match(resend.stdout, /queued again for 2 endpoint/);
  await until(() => events.seen.filter((x) => x.path === path).length === 7);
  assert.deepEqual(events.signatureFailures(), []);

  const test1 = await cms(['events', 'endpoint', 'test', id, '--json']);
  assert.equal(JSON.parse(test1.stdout).ok, true);

  const rotated = await cms(['events', 'endpoint', 'rotate-secret', id, '--json']);
  const secret2 = JSON.parse(rotated.stdout).secret;
  assert.notEqual(secret2, created.secret);

  const dis = await cms(['events', 'endpoint', 'disable', id]);
  assert.equal(dis.code, 0, dis.stderr);
  assert.match(dis.stdout, /disabled/);
  assert.equal((await s.admin('GET', `/admin/event-endpoints/${id}`)).enabled, false);

  const rm = await cms(['events', 'endpoint', 'remove', id]);
  assert.equal(rm.code, 0, rm.stderr);
  const again = await cms(['events', 'endpoint', 'remove', id]);
  assert.notEqual(again.code, 0);
  assert.match(again.stderr, /Event endpoint not found/);
});

test('cms events: bad input is refused with a message', async () => {
  const { companyId } = await s.company();
  const bad = await cms(['events', 'endpoint', 'add', '--company', String(companyId), '--url', 'http://10.1.2.3/x']);
  assert.notEqual(bad.code, 0);
  assert.match(bad.stderr, /private or reserved/);
  const type = await cms(['events', 'endpoint', 'add', '--company', String(companyId), '--url', events.origin + '/x', '--events', 'message.nope']);
  assert.equal(type.code, 2);
  assert.match(type.stderr, /unknown event type message\.nope/);
  const since = await cms(['events', 'replay', '1', '--since', 'last tuesday']);
  assert.equal(since.code, 2);
  assert.match(since.stderr, /RFC 3339/);
  assert.equal((await s.admin('GET', `/admin/companies/${companyId}/event-endpoints`)).endpoints.length, 0);
});
