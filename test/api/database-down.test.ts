/**
 * A database that is down (bad input and faults): requests get 503 {"detail":"Service
 * unavailable"} with Retry-After, /readyz says 503, and the service recovers by itself when the database
 * returns. PostgreSQL only (an embedded database cannot go away): the service reaches PostgreSQL through
 * a TCP proxy that the test cuts and restores.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { eventually, FakeClock, startTestServer, type TestServer } from '../helpers/server.ts';

const pgUrl = process.env.TEST_DATABASE_URL;

/** A TCP proxy to PostgreSQL that can be cut (every connection dropped, new ones refused) and restored. */
class Proxy {
  server: net.Server | undefined;
  readonly sockets = new Set<net.Socket>();
  port = 0;
  readonly target: URL;
  constructor(target: URL) {
    this.target = target;
  }
  async start(port = 0): Promise<void> {
    this.server = net.createServer((client) => {
      const upstream = net.connect(Number(this.target.port || 5432), this.target.hostname);
      for (const s of [client, upstream]) {
        this.sockets.add(s);
        s.on('close', () => this.sockets.delete(s));
        s.on('error', () => {});
      }
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((resolve) => this.server!.listen(port, '127.0.0.1', resolve));
    this.port = (this.server!.address() as net.AddressInfo).port;
  }
  async cut(): Promise<void> {
    const closed = new Promise((resolve) => this.server!.close(resolve));
    for (const s of this.sockets) s.destroy();
    await closed;
  }
}

let s: TestServer;
let proxy: Proxy;
const clock = new FakeClock();
before(async () => {
  if (!pgUrl) return;
  proxy = new Proxy(new URL(pgUrl));
  await proxy.start();
  const viaProxy = new URL(pgUrl);
  viaProxy.port = String(proxy.port);
  s = await startTestServer({ role: 'api', clock, env: { DATABASE_URL: viaProxy.toString() } });
});
after(async () => {
  if (!pgUrl) return;
  await s.close();
  await proxy.cut().catch(() => {});
});

test('503 with Retry-After while PostgreSQL is unreachable, then recovery', { skip: pgUrl ? false : 'PostgreSQL only (TEST_DATABASE_URL unset)' }, async () => {
  const c = await s.company();
  const ok = await s.api('/api/segments/create', { key: c.key, body: { name: 'before' } });
  assert.equal(ok.status, 200);

  await proxy.cut();
  // Past the authenticator's cache (2 s of the service's clock), so the key lookup itself needs the database too.
  clock.advance(2_100);
  for (const body of [{ name: 'during' }]) {
    const r = await s.api('/api/segments/create', { key: c.key, body });
    assert.equal(r.status, 503);
    assert.equal(r.text, '{"detail":"Service unavailable"}');
    assert.equal(r.headers.get('retry-after'), '5');
  }
  const ready = await fetch(s.url + '/readyz');
  assert.equal(ready.status, 503);
  // Bad input is still answered as documented while the database is down.
  const bad = await s.api('/api/segments/create', { key: c.key, raw: '{"name": ' });
  assert.equal(bad.status, 422);

  await proxy.start(proxy.port);
  await eventually(async () => (await fetch(s.url + '/readyz')).status === 200, 20_000, 200);
  const after = await eventually(async () => {
    const r = await s.api('/api/segments/create', { key: c.key, body: { name: 'after' } });
    return r.status === 200 ? r : undefined;
  }, 20_000, 200);
  assert.equal(after.json.name, 'after');
});
