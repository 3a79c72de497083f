/**
 * Every answer recorded from the original stack (test/fixtures/validation/cases.json, FastAPI 0.142.2 /
 * Pydantic 2.13.5) replayed over HTTP against the real server and database: each refusal (400, 401, 413,
 * 422) must come back with the same status and the same body, byte for byte; each request the original
 * accepted must not be refused by validation here (it may still meet a 404 or a rate limit, since the
 * ids in the fixtures name nothing in this database).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import net from 'node:net';
import { startTestServer, type TestServer } from '../helpers/server.ts';

interface Case {
  id: string;
  path: string;
  headers: [string, string][];
  body?: string;
  body_b64?: string;
  response: { status: number; headers: Record<string, string>; body: string };
}

const fixture = JSON.parse(readFileSync(new URL('../fixtures/validation/cases.json', import.meta.url), 'utf8')) as {
  meta: { valid_key: string };
  cases: Case[];
};

let s: TestServer;
let key: string;
before(async () => {
  // The acceptance of valid sends is tested elsewhere; here no worker needs to run.
  s = await startTestServer({ role: 'api' });
  ({ key } = await s.company());
});
after(() => s.close());

/**
 * Sends the recorded request byte for byte over a plain TCP connection (repeated headers and padding
 * included, which fetch and http.request would normalise), and reads the answer.
 */
function replay(c: Case): Promise<{ status: number; text: string; headers: Record<string, string> }> {
  const body = c.body_b64 !== undefined ? Buffer.from(c.body_b64, 'base64') : Buffer.from(c.body ?? '', 'utf8');
  const lines = [`POST ${c.path} HTTP/1.1`, `host: ${new URL(s.url).host}`, 'connection: close', `content-length: ${body.length}`];
  for (const [k, v] of c.headers) lines.push(`${k}: ${k.toLowerCase() === 'service-api-key' ? v.replace(fixture.meta.valid_key, key) : v}`);
  const { port } = new URL(s.url);
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const socket = net.connect(Number(port), '127.0.0.1', () => {
      // write, not end: a client that half-closes its side aborts a request still being answered (Node's
      // http server default), and real clients do not; `connection: close` makes the server close after.
      socket.write(Buffer.concat([Buffer.from(lines.join('\r\n') + '\r\n\r\n', 'latin1'), body]));
    });
    socket.on('data', (d: Buffer) => chunks.push(d));
    socket.on('error', reject);
    socket.on('close', () => {
      const raw = Buffer.concat(chunks);
      const split = raw.indexOf('\r\n\r\n');
      const head = raw.subarray(0, split).toString('latin1').split('\r\n');
      const headers: Record<string, string> = {};
      for (const line of head.slice(1)) {
        const i = line.indexOf(':');
        headers[line.slice(0, i).toLowerCase()] = line.slice(i + 1).trim();
      }
      resolve({ status: Number(head[0].split(' ')[1]), text: raw.subarray(split + 4).toString('utf8'), headers });
    });
  });
}

test('recorded refusals come back identical over HTTP', async () => {
  const refusals = fixture.cases.filter((c) => c.response.status !== 200);
  assert.ok(refusals.length > 600);
  const mismatches: string[] = [];
  for (const c of refusals) {
    const got = await replay(c);
    if (got.status !== c.response.status || got.text !== c.response.body) {
      mismatches.push(`${c.id}: expected ${c.response.status} ${c.response.body.slice(0, 200)}\n   got ${got.status} ${got.text.slice(0, 200)}`);
    }
    const wwwAuth = c.response.headers['www-authenticate'];
    if (wwwAuth && got.headers['www-authenticate'] !== wwwAuth) mismatches.push(`${c.id}: www-authenticate`);
    if (got.headers['content-type'] !== 'application/json') mismatches.push(`${c.id}: content-type ${got.headers['content-type']}`);
  }
  assert.deepEqual(mismatches, []);
});

test('requests the original accepted are not refused by validation', async () => {
  const accepted = fixture.cases.filter((c) => c.response.status === 200);
  assert.ok(accepted.length > 150);
  const refused: string[] = [];
  for (const c of accepted) {
    const got = await replay(c);
    if (![200, 400, 403, 404, 429].includes(got.status)) refused.push(`${c.id}: ${got.status} ${got.text.slice(0, 200)}`);
  }
  assert.deepEqual(refused, []);
});
