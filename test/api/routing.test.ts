/**
 * Routing exactly as Starlette (docs/decisions.md#1-request-handling-order, step 1), through the real server over
 * raw HTTP/1.1 (so that the request target, `Host` and `X-Forwarded-Proto` are exactly as written).
 *
 * Compared with the FastAPI oracle (tools/oracle/app.py: fastapi 0.142.2, starlette 1.7.0, uvicorn with
 * its default FORWARDED_ALLOW_IPS, peer 127.0.0.1) on 2026-11-24, same raw requests, status, `Location`
 * and body identical for all of these:
 *   POST|GET|HEAD /api/segments/create/              307 http://HOST/api/segments/create
 *   DELETE /api/automations/send/                    307 (any method)
 *   POST /api/segments/create/?a=1&b=%2F              307 query kept as sent
 *   POST /api/segments/create//                       307 .../create (Starlette strips all trailing slashes)
 *   POST /api/segments/create%2F, .../1/contacts%2F   307 (%2F decoded before routing)
 *   POST /api/segments/1/contacts/ + X-Forwarded-Proto: https (or " https ")  307 https://...
 *     ... + X-Forwarded-Proto: ftp                    307 http://...
 *     ... + Host: example.com:8080 / [::1]:80 / EXAMPLE.com:0080   307 to that host as written
 *     ... + Host: "bad host" / h:99999                307 to the server's own address
 *   POST /api/segments/caf%C3%A9%20x%22/contacts/?q=a%20b&c=<>"
 *                                                     307 .../caf%C3%A9%20x%22/contacts?q=a%20b&c=%3C%3E%22
 *   POST /api/segments//contacts, /api/segments/1%2F2/contacts, /api/segments/%2F/contacts   404
 *   POST //api/segments/create, /api/unknown/, /api/segments/1/contacts/x                     404
 *   GET /api/segments/create                          405 (unchanged)
 *   POST /api/segments/x/contacts (no key)            401 (a matching path goes on to auth)
 *   Invalid percent-encoding, decoded as uvicorn does (U+FFFD; a stray `%` stays literal):
 *   POST /api/segments/%FF/contacts/, .../%E2%82/contacts/   307 .../api/segments/%EF%BF%BD/contacts
 *   POST /api/segments/%FF/contacts, .../%ZZ/contacts         401 (routed; auth comes next)
 *   POST /api/segments/a%/contacts/                           307 .../api/segments/a%/contacts
 *   POST /api/segments/%C3%A9%FF%2F/contacts/?x=%FF, /api/segments/create%FF, GET .../contacts%   404
 * Not compared: `/healthz/`, `/docs/` etc. are this service's own routes (the oracle has none).
 *
 * The same rules hold for the whole app (operator API, console): tested below on /admin.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { ADMIN_TOKEN, startTestServer, type TestServer } from '../helpers/server.ts';

let s: TestServer;
let port: number;
let key: string;
let companyId: number;
before(async () => {
  s = await startTestServer({ role: 'api' });
  port = Number(new URL(s.url).port);
  ({ key, companyId } = await s.company());
});
after(() => s.close());

interface Raw {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Sends one raw HTTP/1.1 request (target as written) and reads the whole answer. */
function raw(method: string, target: string, headers: Record<string, string> = {}, body = ''): Promise<Raw> {
  const all: Record<string, string> = { Host: `127.0.0.1:${port}`, 'Content-Length': String(Buffer.byteLength(body)), Connection: 'close', ...headers };
  const text = `${method} ${target} HTTP/1.1\r\n${Object.entries(all).map(([k, v]) => `${k}: ${v}`).join('\r\n')}\r\n\r\n${body}`;
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.end(text));
    const chunks: Buffer[] = [];
    socket.on('data', (d: Buffer) => chunks.push(d));
    socket.on('error', reject);
    socket.on('end', () => {
      const all = Buffer.concat(chunks).toString('latin1');
      const [head, ...rest] = all.split('\r\n\r\n');
      const [statusLine, ...lines] = head.split('\r\n');
      const h: Record<string, string> = {};
      for (const line of lines) {
        const i = line.indexOf(':');
        h[line.slice(0, i).toLowerCase()] = line.slice(i + 1).trim();
      }
      resolve({ status: Number(statusLine.split(' ')[1]), headers: h, body: rest.join('\r\n\r\n') });
    });
  });
}

const base = () => `http://127.0.0.1:${port}`;

test('a trailing slash too many or too few: 307, empty body, Location with the slash toggled, any method', async () => {
  for (const method of ['POST', 'GET', 'HEAD', 'DELETE', 'PUT']) {
    const r = await raw(method, '/api/segments/create/', { 'service-api-key': key, 'Content-Type': 'application/json' }, method === 'HEAD' ? '' : '{"name":"x"}');
    assert.equal(r.status, 307, method);
    assert.equal(r.headers.location, `${base()}/api/segments/create`, method);
    assert.equal(r.body, '', method);
    assert.equal(r.headers['content-length'], '0');
    assert.equal(r.headers['content-type'], undefined);
  }
  const cases: [string, string][] = [
    ['/api/segments/create/?a=1&b=%2F', '/api/segments/create?a=1&b=%2F'],
    ['/api/segments/create//', '/api/segments/create'],
    ['/api/segments/create%2F', '/api/segments/create'],
    ['/api/segments/1/contacts%2F', '/api/segments/1/contacts'],
    ['/api/segments/1/contacts/', '/api/segments/1/contacts'],
    ['/api/automations/send/', '/api/automations/send'],
    ['/api/connector/send/?x', '/api/connector/send?x'],
    ['/api/segments/caf%C3%A9%20x%22/contacts/?q=a%20b&c=<>"', '/api/segments/caf%C3%A9%20x%22/contacts?q=a%20b&c=%3C%3E%22'],
    ['/openapi.json/', '/openapi.json'],
  ];
  for (const [target, location] of cases) {
    const r = await raw('POST', target);
    assert.equal(r.status, 307, target);
    assert.equal(r.headers.location, base() + location, target);
    assert.equal(r.body, '');
  }
});

test('Location: scheme from X-Forwarded-Proto of a trusted peer (127.0.0.1), host from a valid Host header', async () => {
  const loc = async (headers: Record<string, string>) => (await raw('POST', '/api/segments/1/contacts/', headers)).headers.location;
  assert.equal(await loc({ 'X-Forwarded-Proto': 'https' }), `https://127.0.0.1:${port}/api/segments/1/contacts`);
  assert.equal(await loc({ 'X-Forwarded-Proto': ' https ' }), `https://127.0.0.1:${port}/api/segments/1/contacts`);
  assert.equal(await loc({ 'X-Forwarded-Proto': 'ftp' }), `http://127.0.0.1:${port}/api/segments/1/contacts`);
  assert.equal(await loc({ Host: 'example.com:8080' }), 'http://example.com:8080/api/segments/1/contacts');
  assert.equal(await loc({ Host: 'example.com', 'X-Forwarded-Proto': 'https' }), 'https://example.com/api/segments/1/contacts');
  assert.equal(await loc({ Host: '[::1]:80' }), 'http://[::1]:80/api/segments/1/contacts');
  assert.equal(await loc({ Host: 'EXAMPLE.com:0080' }), 'http://EXAMPLE.com:0080/api/segments/1/contacts');
  // An invalid Host falls back to the server's own address.
  assert.equal(await loc({ Host: 'bad host' }), `http://127.0.0.1:${port}/api/segments/1/contacts`);
  assert.equal(await loc({ Host: 'h:99999' }), `http://127.0.0.1:${port}/api/segments/1/contacts`);
});

test('a path parameter never matches an empty segment or a decoded %2F: 404, nothing else runs', async () => {
  const { segment_id } = (await s.api('/api/segments/create', { key, body: { name: 'Routing' } })).json;
  for (const target of [
    '/api/segments//contacts',
    `/api/segments/${segment_id}%2F2/contacts`,
    `/api/segments/${segment_id}%2f2/contacts`,
    '/api/segments/%2F/contacts',
    '//api/segments/create',
    '/api/unknown/',
    '/api/segments/1/contacts/x',
  ]) {
    const r = await raw('POST', target, { 'service-api-key': key, 'Content-Type': 'application/json' }, '{"contacts":["+14155550100"],"mode":"add"}');
    assert.equal(r.status, 404, target);
    assert.equal(r.body, '{"detail":"Not Found"}', target);
  }
  // Nothing was added by any of them: the segment is still empty.
  const check = await s.api(`/api/segments/${segment_id}/contacts`, { key, body: { contacts: ['+14155550100'], mode: 'delete' } });
  assert.equal(check.status, 200);
  assert.equal(check.json.contacts_processed, 0);
});

test('unchanged: an exact path goes on to authentication; a wrong method is 405 with Allow', async () => {
  const r = await raw('POST', '/api/segments/x/contacts', { 'Content-Type': 'text/plain' });
  assert.equal(r.status, 401);
  assert.equal(r.body, '{"detail":"Not authenticated"}');
  const m = await raw('GET', '/api/segments/create');
  assert.equal(m.status, 405);
  assert.equal(m.headers.allow, 'POST');
  // A decoded path matching a route with another method is 405 too, as in Starlette.
  const d = await raw('GET', '/api/segments/%31/contacts');
  assert.equal(d.status, 405);
});

test('the operator API and the console follow the same rules', async () => {
  const auth = { Authorization: `Bearer ${ADMIN_TOKEN}` };
  const r = await raw('GET', `/admin/companies/${companyId}/?x=1`, auth);
  assert.equal(r.status, 307);
  assert.equal(r.headers.location, `${base()}/admin/companies/${companyId}?x=1`);
  const e = await raw('GET', '/admin/companies//api-keys', auth);
  assert.equal(e.status, 404);
  assert.equal(e.body, '{"detail":"Not Found"}');
  const slash = await raw('GET', `/admin/companies/${companyId}%2Fapi-keys`, auth);
  assert.equal(slash.status, 404);
  const login = await raw('GET', '/console/login/');
  assert.equal(login.status, 307);
  assert.equal(login.headers.location, `${base()}/console/login`);
  // A plugin's root is served with and without its slash (Fastify's prefixTrailingSlash 'both').
  assert.equal((await raw('GET', '/docs/')).status, 200);
  assert.equal((await raw('GET', '/docs')).status, 200);
});

test('invalid percent-encoding routes as uvicorn decodes it, never a framework 400', async () => {
  const redirects: [string, string][] = [
    ['/api/segments/%FF/contacts/', '/api/segments/%EF%BF%BD/contacts'],
    ['/api/segments/%E2%82/contacts/', '/api/segments/%EF%BF%BD/contacts'],
    ['/api/segments/a%/contacts/', '/api/segments/a%/contacts'],
  ];
  for (const [target, location] of redirects) {
    const r = await raw('POST', target);
    assert.equal(r.status, 307, target);
    assert.equal(r.headers.location, base() + location, target);
  }
  for (const target of ['/api/segments/%FF/contacts', '/api/segments/%ZZ/contacts']) {
    const r = await raw('POST', target);
    assert.equal(r.status, 401, target);
    assert.equal(r.body, '{"detail":"Not authenticated"}');
  }
  for (const [method, target] of [['POST', '/api/segments/%C3%A9%FF%2F/contacts/?x=%FF'], ['POST', '/api/segments/create%FF'], ['GET', '/api/segments/1/contacts%']]) {
    const r = await raw(method, target);
    assert.equal(r.status, 404, target);
    assert.equal(r.body, '{"detail":"Not Found"}');
  }
});
