/**
 * Keep-alive behind a load balancer: the server keeps an idle keep-alive connection open for at least
 * 72 s (longer than the usual balancer's 60 s idle timeout, so the balancer closes idle connections, not
 * the server), tells clients so (`Keep-Alive: timeout=72`), and serves the next request on the same
 * connection; the slow-client bounds (test/security/slowloris.test.ts) stay as they were, counted per
 * request. Observed on a raw connection to the real server: the server's own socket for it is read
 * after the answer, no time passes.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { eventually, startTestServer, type TestServer } from '../helpers/server.ts';

let s: TestServer;
// A server of its own: the test looks at the connections the server keeps open.
before(async () => { s = await startTestServer({ role: 'api', own: true }); });
after(() => s.close());

test('the server keeps idle keep-alive connections 72 s; the slow-client timeouts stay short', () => {
  const server = s.service.app.server;
  assert.ok(server.keepAliveTimeout >= 72_000, `keepAliveTimeout ${server.keepAliveTimeout}`);
  // Per request, from its first byte: unchanged by the keep-alive time.
  assert.equal(server.headersTimeout, 10_000);
  assert.equal(server.requestTimeout, 30_000);
});

test('an idle keep-alive connection is held open 72 s and serves the next request', async () => {
  const server = s.service.app.server;
  const { port } = new URL(s.url);
  const accepted: net.Socket[] = [];
  const onConnection = (sock: net.Socket) => { accepted.push(sock); };
  server.on('connection', onConnection);
  const client = net.connect(Number(port), '127.0.0.1');
  try {
    await new Promise<void>((resolve, reject) => { client.once('connect', resolve); client.once('error', reject); });
    let received = '';
    client.on('data', (d) => { received += d; });
    const answers = () => received.match(/HTTP\/1\.1 200 OK/g)?.length ?? 0;

    client.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    await eventually(async () => answers() === 1 && /\r\n\r\n[^]*\}/.test(received));
    assert.match(received, /^connection: keep-alive\r$/im);
    assert.match(received, /^keep-alive: timeout=72\r$/im, 'clients are told how long the connection stays');
    assert.equal(accepted.length, 1);
    const [serverSide] = accepted;
    // Between requests the server's socket times out after the keep-alive time (plus Node's 1 s
    // buffer), not after the headers or request timeout.
    await eventually(async () => serverSide.timeout! >= 72_000);
    assert.ok(!serverSide.destroyed);

    client.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    await eventually(async () => answers() === 2);
    assert.equal(accepted.length, 1, 'the second request came on the same connection');
  } finally {
    server.off('connection', onConnection);
    client.destroy();
  }
});
