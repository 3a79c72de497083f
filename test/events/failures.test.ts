/**
 * Receivers that misbehave (docs/events.md): a 20 MB answer and a
 * never-ending answer are bounded failed attempts (DELIVERY_TIMEOUT, 64 KiB cap) while a healthy
 * endpoint of the same company keeps getting its events; 410 disables the endpoint with its reason
 * and fails its pending deliveries; a schedule that runs out fails the delivery; an endpoint failing
 * every attempt for 5 days (FakeClock) is disabled; the test event is signed like the others.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { sql } from 'kysely';
import { Webhook } from 'standardwebhooks';
import { eventually, FakeClock, startTestServer, type TestServer } from '../helpers/server.ts';
import { startPipelineServer } from '../pipeline/helpers.ts';
import { startReceiver, type WebhookReceiver } from '../helpers/receiver.ts';
import { addEndpoint, phone, until } from './helpers.ts';

let s: TestServer;
let events: WebhookReceiver;
const clock = new FakeClock(Date.parse('2026-01-05T10:00:00Z'));
const run = Math.floor(Math.random() * 1000);

before(async () => {
  s = await startTestServer({ clock, env: { EVENT_RETRY_SCHEDULE: '2s,2s', DELIVERY_TIMEOUT: '1s' } });
  events = await startReceiver();
});
after(async () => {
  await s.close();
  await events.close();
});

async function attempts(endpointId: number, n: number): Promise<any[]> {
  return eventually(async () => {
    const l = (await s.admin('GET', `/admin/event-endpoints/${endpointId}/attempts`)).attempts;
    return l.length >= n ? l : undefined;
  });
}

async function deliveryStatus(endpointId: number): Promise<string[]> {
  const r = await sql<{ status: string }>`SELECT status FROM event_deliveries WHERE endpoint_id = ${endpointId} ORDER BY event_id`.execute(s.service.deps.database.db);
  return r.rows.map((x) => x.status);
}

/** A raw receiver: `huge` streams 20 MB, `slow` sends a byte every 100 ms and never ends. */
async function rawReceiver(): Promise<{ url: string; written: Map<string, number>; server: Server }> {
  const written = new Map<string, number>();
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      if (req.url === '/huge') {
        const chunk = Buffer.alloc(64 * 1024, 120);
        let sent = 0;
        const pump = () => {
          while (sent < 20 * 1024 * 1024) {
            sent += chunk.length;
            written.set('/huge', sent);
            if (!res.write(chunk)) return void res.once('drain', pump);
          }
          res.end();
        };
        res.on('error', () => {});
        pump();
      } else {
        const t = setInterval(() => { written.set('/slow', (written.get('/slow') ?? 0) + 1); res.write('x'); }, 100);
        res.on('close', () => clearInterval(t));
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, written, server };
}

test('a 20 MB answer and a never-ending one are bounded failed attempts; a healthy endpoint is not held up', async () => {
  const raw = await rawReceiver();
  try {
    const { companyId } = await s.company();
    const types = ['contact.opted_out'];
    const huge = await s.admin('POST', `/admin/companies/${companyId}/event-endpoints`, { url: raw.url + '/huge', events: types }, 201);
    const slow = await s.admin('POST', `/admin/companies/${companyId}/event-endpoints`, { url: raw.url + '/slow', events: types }, 201);
    const healthy = await addEndpoint(s, events, companyId, `/healthy-${companyId}`, types);
    const heapBefore = process.memoryUsage().heapUsed;
    await s.admin('PUT', `/admin/companies/${companyId}/contacts`, { contacts: Array.from({ length: 5 }, (_, i) => ({ phone: phone(run, i), opted_out: true })) });
    await until(() => events.delivered(`/healthy-${companyId}`).size === 5);
    const h = await attempts(huge.endpoint_id, 5);
    for (const a of h) {
      assert.equal(a.status_code, 200);
      assert.equal(a.error, 'response larger than 65536 bytes');
      assert.ok(a.response_excerpt.length <= 256);
      assert.ok(a.duration_ms < 1500);
    }
    assert.ok((raw.written.get('/huge') ?? 0) < 20 * 1024 * 1024, 'the service stopped reading long before 20 MB');
    const sl = await attempts(slow.endpoint_id, 5);
    for (const a of sl) {
      assert.equal(a.error, 'timeout after 1000 ms');
      assert.ok(a.duration_ms >= 900 && a.duration_ms < 2500, String(a.duration_ms));
    }
    assert.ok(process.memoryUsage().heapUsed - heapBefore < 60 * 1024 * 1024, 'no memory growth of the answers\' size');
    assert.deepEqual(await deliveryStatus(huge.endpoint_id), Array(5).fill('pending'), 'retried later');
    assert.deepEqual(await deliveryStatus(healthy.endpoint_id), Array(5).fill('delivered'));
    // The schedule (2s,2s) runs out after the third attempt: failed.
    clock.advance(2_000);
    await attempts(huge.endpoint_id, 10);
    clock.advance(2_000);
    await attempts(huge.endpoint_id, 15);
    await eventually(async () => (await deliveryStatus(huge.endpoint_id)).every((x) => x === 'failed') || undefined);
    const ep = await s.admin('GET', `/admin/event-endpoints/${huge.endpoint_id}`);
    assert.equal(ep.enabled, true, 'failing for a few seconds does not disable');
    assert.ok(ep.failing_since);
    assert.deepEqual(events.signatureFailures(), []);
  } finally {
    raw.server.closeAllConnections();
    raw.server.close();
  }
});

test('410 Gone disables the endpoint with the reason and fails its pending deliveries', async () => {
  const { companyId } = await s.company();
  const path = `/gone-${companyId}`;
  const ep = await addEndpoint(s, events, companyId, path, ['contact.opted_out', 'contact.opted_in']);
  const previous = events.answer;
  events.answer = (seen) => (seen.path === path ? 410 : previous(seen));
  try {
    await s.admin('PUT', `/admin/companies/${companyId}/contacts`, { contacts: Array.from({ length: 20 }, (_, i) => ({ phone: phone(run, 100 + i), opted_out: true })) });
    const after = await eventually(async () => {
      const e = await s.admin('GET', `/admin/event-endpoints/${ep.endpoint_id}`);
      return e.enabled ? undefined : e;
    });
    assert.equal(after.disabled_reason, 'receiver answered 410 Gone');
    await eventually(async () => (await deliveryStatus(ep.endpoint_id)).every((x) => x === 'failed') || undefined);
    // Requests already in flight at the 410 still finish (each one's attempt is written); none starts after it.
    const attempts = async () => Number((await sql<{ n: string }>`SELECT count(*) AS n FROM event_attempts WHERE endpoint_id = ${ep.endpoint_id}`.execute(s.service.deps.database.db)).rows[0].n);
    const n = await eventually(async () => {
      const seen = events.seen.filter((x) => x.path === path).length;
      return seen === await attempts() ? seen : undefined;
    });
    assert.ok(n >= 1 && n <= 20);
    // Disabled: no more events for it (none is written for a company without an enabled subscriber), and
    // no delivery is left pending, so moving the clock on sends nothing.
    await s.admin('PUT', `/admin/companies/${companyId}/contacts`, { contacts: [{ phone: phone(run, 100), opted_out: false }] });
    clock.advance(10_000);
    const statuses = await deliveryStatus(ep.endpoint_id);
    assert.equal(statuses.length, 20, 'no delivery written for the opt-in');
    assert.ok(statuses.every((x) => x === 'failed'));
    assert.equal(events.seen.filter((x) => x.path === path).length, n);
    // Enabling it again clears the reason.
    const again = await s.admin('PATCH', `/admin/event-endpoints/${ep.endpoint_id}`, { enabled: true });
    assert.equal(again.enabled, true);
    assert.equal(again.disabled_reason, null);
    const audit = await s.admin('GET', `/admin/audit?company_id=${companyId}`);
    assert.ok(audit.entries.some((e: any) => e.action === 'event_endpoint.update'));
  } finally {
    events.answer = previous;
  }
});

test('the test event is signed like every delivery and answers its outcome', async () => {
  const { companyId } = await s.company();
  const path = `/test-event-${companyId}`;
  const ep = await addEndpoint(s, events, companyId, path);
  const r = await s.admin('POST', `/admin/event-endpoints/${ep.endpoint_id}/test`);
  assert.equal(r.ok, true);
  assert.equal(r.status_code, 200);
  assert.match(r.event_id, /^evt_[0-9a-f]{32}$/);
  const seen = events.seen.find((x) => x.id === r.event_id)!;
  assert.equal(seen.signatureError, null);
  assert.deepEqual(seen.body, { type: 'endpoint.test', timestamp: new Date(clock.now()).toISOString(), data: { endpoint_id: ep.endpoint_id } });
  new Webhook(ep.secret).verify(seen.text, seen.headers as Record<string, string>);
  // A receiver that is down: the outcome says so, nothing else happens.
  await s.admin('PATCH', `/admin/event-endpoints/${ep.endpoint_id}`, { url: 'http://127.0.0.1:9/closed' });
  const down = await s.admin('POST', `/admin/event-endpoints/${ep.endpoint_id}/test`);
  assert.equal(down.ok, false);
  assert.equal(down.status_code, null);
  assert.match(down.error, /connection error/);
});

test('an endpoint failing every attempt for 5 days (clock time) is disabled', async () => {
  const c5 = new FakeClock(Date.parse('2026-02-01T00:00:00Z'));
  // Its own database on PostgreSQL: the first server's loop (another clock) must not claim these.
  const s5 = await startPipelineServer('events_5days', { clock: c5, env: { EVENT_RETRY_SCHEDULE: '1d,1d,1d,1d,1d,1d,1d,1d' } });
  const r5 = await startReceiver();
  r5.answer = () => 500;
  try {
    const { companyId } = await s5.company();
    const ep = await addEndpoint(s5, r5, companyId, '/failing', ['contact.opted_out']);
    await s5.admin('PUT', `/admin/companies/${companyId}/contacts`, { contacts: [{ phone: phone(run, 500), opted_out: true }] });
    const logged = (n: number) => eventually(async () => (await s5.admin('GET', `/admin/event-endpoints/${ep.endpoint_id}/attempts`)).attempts.length >= n || undefined);
    await logged(1);
    const start = (await s5.admin('GET', `/admin/event-endpoints/${ep.endpoint_id}`)).failing_since;
    assert.equal(start, new Date(c5.now()).toISOString());
    for (let day = 1; day <= 4; day++) {
      c5.advance(24 * 3600 * 1000);
      await logged(day + 1);
      assert.equal((await s5.admin('GET', `/admin/event-endpoints/${ep.endpoint_id}`)).enabled, true, `day ${day}`);
    }
    c5.advance(24 * 3600 * 1000);
    await logged(6);
    const off = await eventually(async () => {
      const e = await s5.admin('GET', `/admin/event-endpoints/${ep.endpoint_id}`);
      return e.enabled ? undefined : e;
    });
    assert.equal(off.disabled_reason, 'every delivery attempt failed for 5 days');
    assert.deepEqual(r5.signatureFailures(), []);
  } finally {
    await s5.close();
    await r5.close();
  }
});
