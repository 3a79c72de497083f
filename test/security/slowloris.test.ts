/**
 * Slow clients: 500 connections that stall, half in the middle of their headers and
 * half in the middle of a declared body, do not stop normal clients from being served; the server has
 * bounded headers and request timeouts, so such connections are eventually dropped.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { Agent, request } from 'undici';
import { eventually, startTestServer, type TestServer } from '../helpers/server.ts';

const IDLE = 500;

let s: TestServer;
// A server of its own: the test holds hundreds of its connections open and waits for the server to drop them.
before(async () => { s = await startTestServer({ role: 'api', own: true }); });
after(() => s.close());

test('the server bounds how long a client may take to send headers and the whole request', () => {
  const server = s.service.app.server;
  assert.ok(server.headersTimeout > 0 && server.headersTimeout <= 30_000, `headersTimeout ${server.headersTimeout}`);
  assert.ok(server.requestTimeout > 0 && server.requestTimeout <= 60_000, `requestTimeout ${server.requestTimeout}`);
  assert.ok(server.headersTimeout <= server.requestTimeout);
});

test(`${IDLE} stalled connections do not stop normal clients`, { timeout: 120_000 }, async () => {
  const c = await s.company();
  const clients = await Promise.all(Array.from({ length: 5 }, () => s.company()));
  const { port } = new URL(s.url);
  const stalled: net.Socket[] = [];
  // The server's side of every connection, by the client's port: to see when it has read what was sent.
  const accepted = new Map<number, net.Socket>();
  const onConnection = (sock: net.Socket) => { if (sock.remotePort) accepted.set(sock.remotePort, sock); };
  s.service.app.server.on('connection', onConnection);
  const written = new Map<net.Socket, number>();
  try {
    for (let i = 0; i < IDLE; i++) {
      const sock = net.connect(Number(port), '127.0.0.1');
      sock.on('error', () => {});
      await new Promise<void>((resolve, reject) => { sock.once('connect', resolve); sock.once('error', reject); });
      const part = i % 2 === 0
        // Partial headers: the request line and one header, never the blank line.
        ? `POST /api/segments/create HTTP/1.1\r\nHost: 127.0.0.1\r\nservice-api-key: ${c.key}\r\nX-Slow: `
        // Complete headers, a body that never arrives in full.
        : `POST /api/segments/create HTTP/1.1\r\nHost: 127.0.0.1\r\nservice-api-key: ${c.key}\r\ncontent-type: application/json\r\ncontent-length: 100000\r\n\r\n{"name":`;
      sock.write(part);
      written.set(sock, Buffer.byteLength(part));
      stalled.push(sock);
    }
    // No pause for time: wait until the server has accepted every stalled connection and read all that
    // was written on it (its socket's bytesRead), so a server that answered or dropped them would have.
    await eventually(async () => stalled.every((x) => (accepted.get(x.localPort!)?.bytesRead ?? 0) >= written.get(x)!), 30_000, 10);
    // Every stalled connection is still open on both sides: the server is really holding them.
    assert.equal(stalled.filter((x) => !x.destroyed).length, IDLE);
    assert.equal(stalled.filter((x) => accepted.get(x.localPort!)!.destroyed).length, 0);

    // Normal clients, on fresh connections, get their answers.
    const agent = new Agent({ connections: 8 });
    try {
      const results = await Promise.all(Array.from({ length: 40 }, async (_, i) => {
        if (i % 2 === 0) {
          const r = await request(s.url + '/healthz', { dispatcher: agent });
          return [r.statusCode, await r.body.text()] as const;
        }
        // Five companies, four segments each: within every rate and segment limit.
        const r = await request(s.url + '/api/segments/create', {
          method: 'POST', dispatcher: agent,
          headers: { 'service-api-key': clients[i % 5].key, 'content-type': 'application/json' },
          body: JSON.stringify({ name: `n${i}` }),
        });
        return [r.statusCode, await r.body.text()] as const;
      }));
      for (const [status, text] of results) assert.equal(status, 200, text);
    } finally {
      await agent.close();
    }
    // And none of the stalled requests was executed (no segment named by a partial body).
    const names = await s.service.deps.database.db.selectFrom('segments').select('name').where('company_id', '=', c.companyId).execute();
    assert.deepEqual(names, []);
  } finally {
    s.service.app.server.off('connection', onConnection);
    for (const sock of stalled) sock.destroy();
  }
});
