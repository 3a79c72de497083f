/**
 * Settings › Integrations & developers › Webhooks in the company console: add (secret shown
 * once), list, edit, disable/enable, reveal and rotate the secret, send a test event, the attempt log
 * with a resend button, remove with confirmation; bad input re-renders the form with the reason and
 * changes nothing; BOLA: another company's endpoint and event ids answer 404 on every page and action,
 * and its endpoints and attempts never appear.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { eventually, startTestServer, type TestServer } from '../helpers/server.ts';
import { csrfToken, signedInClient, type ConsoleClient } from '../console/helpers.ts';
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

const PAGE = '/console/settings/integrations/webhooks';

/** POSTs a form with repeated fields (events) and the CSRF token of `pagePath`. */
async function post(c: ConsoleClient, pagePath: string, action: string, fields: [string, string][]) {
  const token = csrfToken((await c.get(pagePath)).text);
  const body = new URLSearchParams([['_csrf', token], ...fields]).toString();
  const res = await fetch(s.url + action, {
    method: 'POST', redirect: 'manual', body,
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: [...c.cookies].map(([k, v]) => `${k}=${v}`).join('; ') },
  });
  return { status: res.status, text: await res.text(), location: res.headers.get('location'), headers: { 'cache-control': res.headers.get('cache-control') ?? '' } as Record<string, string> };
}

test('add, list, edit, disable, reveal, rotate, test, attempt log, resend, remove', async () => {
  const { companyId } = await s.company();
  const c = await signedInClient(s, companyId);
  const list0 = await c.get(PAGE);
  assert.equal(list0.status, 200);
  assert.match(list0.text, /No webhook endpoints yet/);
  assert.match(list0.text, /aria-current="page"[^>]*>Webhooks|Webhooks<\/a>/);

  // Bad input: the form again with the reason; nothing added.
  for (const [url, re] of [['ftp://x.example/', /http or https/], ['http://10.0.0.7/hook', /private or reserved/], ['', /Enter the URL/]] as const) {
    const r = await post(c, PAGE, PAGE, [['url', url]]);
    assert.equal(r.status, 422, url);
    assert.match(r.text, re);
  }
  const badType = await post(c, PAGE, PAGE, [['url', events.origin + '/x'], ['events', 'message.bogus']]);
  assert.equal(badType.status, 422);
  assert.match(badType.text, /unknown event type message\.bogus/);
  assert.equal((await s.admin('GET', `/admin/companies/${companyId}/event-endpoints`)).endpoints.length, 0);

  const path = `/console-${companyId}`;
  // POST-redirect-GET: to the new endpoint's page, where the secret is revealed on request.
  const add = await post(c, PAGE, PAGE, [['url', events.origin + path], ['description', 'CRM <b>'], ['events', 'contact.opted_out'], ['events', 'contact.opted_in']]);
  assert.equal(add.status, 303);
  const [ep] = (await s.admin('GET', `/admin/companies/${companyId}/event-endpoints`)).endpoints;
  const detail = `${PAGE}/${ep.endpoint_id}`;
  assert.equal(add.location, `${detail}?done=added`);
  const added = await c.get(add.location!);
  assert.equal(added.status, 200);
  assert.match(added.text, /The endpoint was added/);
  assert.ok(!/whsec_/.test(added.text), 'no secret until revealed');
  const revealed = await post(c, detail, `${detail}/reveal`, []);
  assert.equal(revealed.status, 200);
  assert.equal(revealed.headers?.['cache-control'] ?? 'no-store', 'no-store');
  const secret = /value="(whsec_[^"]+)"/.exec(revealed.text)![1];
  assert.equal(secret, (await s.admin('GET', `/admin/event-endpoints/${ep.endpoint_id}/secret`)).secret);
  events.secretFor(path, secret);
  assert.deepEqual(ep.events, ['contact.opted_out', 'contact.opted_in']);
  const list = await c.get(PAGE);
  assert.match(list.text, new RegExp(`data-endpoint-id="${ep.endpoint_id}"`));
  assert.match(list.text, /CRM &lt;b&gt;/, 'escaped');
  assert.ok(!list.text.includes(secret), 'the list never shows the secret');

  // Events arrive, and the attempt log shows them with status, time, duration, excerpt.
  await s.admin('PUT', `/admin/companies/${companyId}/contacts`, { contacts: [{ phone: phone(5, 1), opted_out: true }] });
  await until(() => events.delivered(path).size === 1);
  const eventId = [...events.delivered(path).keys()][0];
  let page = await c.get(detail);
  for (let i = 0; i < 100 && !page.text.includes(`data-event-id="${eventId}"`); i++) {
    await new Promise((r) => setTimeout(r, 50));
    page = await c.get(detail);
  }
  assert.match(page.text, new RegExp(`data-event-id="${eventId}"`));
  assert.match(page.text, /contact\.opted_out/);
  assert.match(page.text, /\{&quot;ok&quot;:true\}/);
  assert.match(page.text, /\d+ ms/);

  const resend = await post(c, detail, `${detail}/resend`, [['event_id', eventId]]);
  assert.equal(resend.status, 303);
  assert.equal(resend.location, `${detail}?done=resent`);
  await until(() => events.seen.filter((x) => x.path === path).length === 2);
  assert.equal(events.seen.at(-1)!.id, eventId);

  const edit = await post(c, detail, detail, [['url', events.origin + path], ['description', ''], ['events', 'contact.opted_out']]);
  assert.equal(edit.status, 303);
  const edited = await s.admin('GET', `/admin/event-endpoints/${ep.endpoint_id}`);
  assert.deepEqual(edited.events, ['contact.opted_out']);
  assert.equal(edited.description, null);
  const badEdit = await post(c, detail, detail, [['url', 'http://192.168.0.1/']]);
  assert.equal(badEdit.status, 422);
  assert.equal((await s.admin('GET', `/admin/event-endpoints/${ep.endpoint_id}`)).url, events.origin + path);

  const rotate = await post(c, detail, `${detail}/rotate`, []);
  assert.equal(rotate.status, 303);
  assert.equal(rotate.location, `${detail}?done=rotated`);
  const reveal = await post(c, detail, `${detail}/reveal`, []);
  const secret2 = /value="(whsec_[^"]+)"/.exec(reveal.text)![1];
  assert.notEqual(secret2, secret);
  events.secretFor(path, secret2);

  const testEvent = await post(c, detail, `${detail}/test`, []);
  assert.equal(testEvent.status, 303);
  assert.match(testEvent.location!, /\?test=ok&ms=\d+&status=200$/);
  assert.match((await c.get(testEvent.location!)).text, /data-test-result="ok"[^>]*>Test event delivered: HTTP 200/);
  assert.equal(events.seen.at(-1)!.body.type, 'endpoint.test');
  await s.admin('PATCH', `/admin/event-endpoints/${ep.endpoint_id}`, { url: 'http://127.0.0.1:9/closed' });
  const failedTest = await post(c, detail, `${detail}/test`, []);
  assert.match(failedTest.location!, /\?test=failed&ms=\d+&error=connection\+error/);
  assert.match((await c.get(failedTest.location!)).text, /data-test-result="failed"[^>]*>Test event not delivered: connection error/);
  await s.admin('PATCH', `/admin/event-endpoints/${ep.endpoint_id}`, { url: events.origin + path });
  assert.deepEqual(events.signatureFailures(), []);

  const off = await post(c, detail, `${detail}/enabled`, [['enabled', 'false']]);
  assert.equal(off.status, 303);
  assert.equal((await s.admin('GET', `/admin/event-endpoints/${ep.endpoint_id}`)).enabled, false);
  await post(c, detail, `${detail}/enabled`, [['enabled', 'true']]);
  assert.equal((await s.admin('GET', `/admin/event-endpoints/${ep.endpoint_id}`)).enabled, true);

  const confirm = await c.get(`${detail}/remove`);
  assert.equal(confirm.status, 200);
  assert.match(confirm.text, /Remove webhook endpoint\?/);
  const removed = await post(c, `${detail}/remove`, `${detail}/remove`, []);
  assert.equal(removed.status, 303);
  assert.equal(removed.location, `${PAGE}?done=removed`);
  assert.equal((await c.get(detail)).status, 404);

  const audit = await s.admin('GET', `/admin/audit?company_id=${companyId}`);
  const actions = new Set(audit.entries.filter((e: any) => e.actor.startsWith('console:')).map((e: any) => e.action));
  for (const a of ['event_endpoint.create', 'event_endpoint.update', 'event_endpoint.reveal_secret', 'event_endpoint.rotate_secret', 'event_endpoint.test', 'event.resend', 'event_endpoint.delete']) {
    assert.ok(actions.has(a), a);
  }
});

test('BOLA: another company\'s endpoints, events and attempts are invisible and untouchable', async () => {
  const a = await s.company();
  const b = await s.company();
  const path = `/bola-${a.companyId}`;
  const ep = await s.admin('POST', `/admin/companies/${a.companyId}/event-endpoints`, { url: events.origin + path, description: 'company A secret hook' }, 201);
  events.secretFor(path, ep.secret);
  await s.admin('PUT', `/admin/companies/${a.companyId}/contacts`, { contacts: [{ phone: phone(6, 1), opted_out: true }] });
  await until(() => events.delivered(path).size === 1);
  const eventId = [...events.delivered(path).keys()][0];
  // The delivery row as written after the one attempt; a resend would queue it again (status, updated_at).
  const deliveryRow = async () => (await sql<{ status: string; attempts: number; updated_at: Date }>`SELECT status, attempts, updated_at FROM event_deliveries WHERE endpoint_id = ${ep.endpoint_id}`.execute(s.service.deps.database.db)).rows;
  const settled = await eventually(async () => {
    const rows = await deliveryRow();
    return rows.length === 1 && rows[0].status === 'delivered' ? rows : undefined;
  });

  const cb = await signedInClient(s, b.companyId);
  const list = await cb.get(PAGE);
  assert.equal(list.status, 200);
  assert.ok(!list.text.includes('company A secret hook'));
  assert.ok(!list.text.includes(path));
  const detail = `${PAGE}/${ep.endpoint_id}`;
  for (const p of [detail, `${detail}/remove`, `${PAGE}/abc`, `${PAGE}/99999999999`]) {
    const r = await cb.get(p);
    assert.equal(r.status, 404, p);
    assert.ok(!r.text.includes(path));
  }
  for (const action of ['', '/enabled', '/reveal', '/rotate', '/test', '/resend', '/remove']) {
    const r = await post(cb, PAGE, `${detail}${action}`, [['url', 'http://127.0.0.1:9/x'], ['enabled', 'false'], ['event_id', eventId]]);
    assert.equal(r.status, 404, action);
    assert.ok(!r.text.includes(ep.secret));
  }
  // Company B resending A's event through B's own endpoint page: 404 too.
  const own = await s.admin('POST', `/admin/companies/${b.companyId}/event-endpoints`, { url: events.origin + `/bola-b-${b.companyId}` }, 201);
  const r = await post(cb, PAGE, `${PAGE}/${own.endpoint_id}/resend`, [['event_id', eventId]]);
  assert.equal(r.status, 404);
  const after = await s.admin('GET', `/admin/event-endpoints/${ep.endpoint_id}`);
  assert.equal(after.enabled, true);
  assert.equal((await s.admin('GET', `/admin/event-endpoints/${ep.endpoint_id}/secret`)).secret, ep.secret);
  assert.deepEqual(await deliveryRow(), settled, 'nothing was queued again');
  assert.equal(events.seen.filter((x) => x.path === path).length, 1, 'nothing was resent');
  assert.equal(events.seen.filter((x) => x.body?.type === 'endpoint.test' && x.path === path).length, 0);
});
