/**
 * The one signed POST of outbound delivery (src/delivery/post.ts) against real HTTP servers on
 * 127.0.0.1, through the one delivery agent (src/delivery/agent.ts): signed so that the official
 * `standardwebhooks` package verifies it (a `whsec_` secret as is; any other secret as its UTF-8 bytes,
 * non-ASCII ones included); the answer read at most 64 KiB with an excerpt kept, a larger one a
 * retryable failure; statuses, Retry-After (retryable only, capped at 7 days), timeouts,
 * interruptions and the network guard classified by src/delivery/failure.ts.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import type { Agent } from 'undici';
import { createDeliveryAgent } from '../../src/delivery/agent.ts';
import { MAX_RETRY_AFTER_MS } from '../../src/delivery/failure.ts';
import { EXCERPT_CHARS, postSigned, RESPONSE_CAP } from '../../src/delivery/post.ts';
import { createSigner, webhookKey } from '../../src/delivery/sign.ts';
import { parseAddressPolicy } from '../../src/delivery/network-guard.ts';

interface Seen { path: string; headers: IncomingMessage['headers']; text: string }
let server: Server;
let origin: string;
let agent: Agent;
const seen: Seen[] = [];
/** Answers by path; `/hang` never answers, `/huge` streams 4 MiB. */
const routes: Record<string, (res: ServerResponse) => void> = {
  '/ok': (res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}'),
  '/long-ok': (res) => res.writeHead(200).end('y'.repeat(RESPONSE_CAP)),
  '/huge': (res) => {
    res.writeHead(200);
    const chunk = Buffer.alloc(16 * 1024, 120);
    let sent = 0;
    const pump = () => {
      while (sent < 4 * 1024 * 1024) {
        sent += chunk.length;
        if (!res.write(chunk)) return void res.once('drain', pump);
      }
      res.end();
    };
    res.on('error', () => {});
    pump();
  },
  '/busy': (res) => res.writeHead(503, { 'retry-after': String(30 * 24 * 3600) }).end('busy'),
  '/slow-down': (res) => res.writeHead(429, { 'retry-after': '90' }).end(),
  '/bad': (res) => res.writeHead(400, { 'retry-after': '90' }).end('{"error":"bad"}'),
  '/moved': (res) => res.writeHead(301, { location: '/ok' }).end(),
  '/hang': () => {},
};

before(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      seen.push({ path: req.url ?? '', headers: req.headers, text: Buffer.concat(chunks).toString('utf8') });
      (routes[req.url ?? ''] ?? routes['/ok'])(res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  agent = createDeliveryAgent(parseAddressPolicy('127.0.0.1'), { timeoutMs: 2_000, connections: 4 });
});
after(async () => {
  await agent.close();
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

const post = (path: string, extra: { secret?: string; timeoutMs?: number; signal?: AbortSignal; id?: string; body?: string } = {}) =>
  postSigned({
    url: origin + path, id: extra.id ?? `msg_${Math.random().toString(36).slice(2)}`, body: extra.body ?? '{"hello":"world"}',
    signer: createSigner(extra.secret ?? 'whsec_' + Buffer.from('a-secret-of-24-bytes-0000').toString('base64')),
    agent, timeoutMs: extra.timeoutMs ?? 2_000, userAgent: 'cms-test/1', signal: extra.signal,
  });

const lastTo = (path: string) => seen.filter((x) => x.path === path).at(-1)!;
const verifies = (wh: Webhook, s: Seen) => {
  try {
    wh.verify(s.text, s.headers as Record<string, string>);
    return true;
  } catch {
    return false;
  }
};

describe('signing', () => {
  test('a whsec_ secret: verified by new Webhook(secret); headers and body as sent', async () => {
    const secret = 'whsec_' + Buffer.from('whsec-key-bytes-of-the-test-0001').toString('base64');
    const o = await post('/ok', { secret, id: 'evt_1', body: '{"type":"x","n":1}' });
    assert.equal(o.failure, undefined);
    const s = lastTo('/ok');
    assert.ok(verifies(new Webhook(secret), s));
    assert.equal(s.headers['webhook-id'], 'evt_1');
    assert.equal(s.headers['user-agent'], 'cms-test/1');
    assert.equal(s.headers['content-type'], 'application/json');
    assert.equal(s.text, '{"type":"x","n":1}');
    assert.ok(Math.abs(Number(s.headers['webhook-timestamp']) - Date.now() / 1000) < 300, 'real time, seconds');
  });
  test('a secret without the prefix is its UTF-8 bytes (never base64-decoded), non-ASCII included', async () => {
    for (const secret of ['MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', 'pässwörd-ünd-mehr-€-16+', 'not base64: a plain secret!']) {
      await post('/ok', { secret, id: 'msg_raw' });
      const s = lastTo('/ok');
      assert.ok(verifies(new Webhook(Buffer.from(secret, 'utf8'), { format: 'raw' }), s), secret);
      const expected = 'v1,' + createHmac('sha256', Buffer.from(secret, 'utf8')).update(`msg_raw.${s.headers['webhook-timestamp']}.${s.text}`).digest('base64');
      assert.equal(s.headers['webhook-signature'], expected, secret);
      assert.deepEqual(webhookKey(secret), Buffer.from(secret, 'utf8'));
    }
    await post('/ok', { secret: 'MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' });
    assert.ok(!verifies(new Webhook('MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'), lastTo('/ok')), 'valid base64, but not decoded');
  });
  test('an empty key is refused when the signer is made', () => {
    assert.throws(() => createSigner('whsec_'));
  });
});

describe('answers', () => {
  test('2xx: delivered, with the status and an excerpt', async () => {
    const o = await post('/ok');
    assert.deepEqual({ statusCode: o.statusCode, excerpt: o.excerpt, failure: o.failure }, { statusCode: 200, excerpt: '{"ok":true}', failure: undefined });
    const long = await post('/long-ok');
    assert.equal(long.failure, undefined, 'exactly 64 KiB is within the cap');
    assert.equal(long.excerpt, 'y'.repeat(EXCERPT_CHARS));
  });
  test('an answer larger than 64 KiB is cut off: a retryable failure with its status and excerpt', async () => {
    const o = await post('/huge');
    assert.equal(o.statusCode, 200);
    assert.deepEqual(o.failure, { status: 'failed', retryable: true, error: `response larger than ${RESPONSE_CAP} bytes` });
    assert.equal(o.excerpt, 'x'.repeat(EXCERPT_CHARS));
  });
  test('statuses: Retry-After of a retryable answer capped at 7 days, none for a permanent one; redirects not followed', async () => {
    assert.deepEqual((await post('/busy')).failure, { status: 'failed', retryable: true, error: 'HTTP 503', code: '503', retryAfterMs: MAX_RETRY_AFTER_MS });
    assert.deepEqual((await post('/slow-down')).failure, { status: 'failed', retryable: true, error: 'HTTP 429', code: '429', retryAfterMs: 90_000 });
    const bad = await post('/bad');
    assert.deepEqual(bad.failure, { status: 'failed', retryable: false, error: 'HTTP 400', code: '400', retryAfterMs: undefined });
    assert.equal(bad.excerpt, '{"error":"bad"}');
    const before = seen.filter((x) => x.path === '/ok').length;
    assert.equal((await post('/moved')).failure?.error, 'HTTP 301');
    assert.equal(seen.filter((x) => x.path === '/ok').length, before, 'the redirect was not followed');
  });
  test('no answer in time: a timeout; an outer abort: interrupted', async () => {
    const o = await post('/hang', { timeoutMs: 300 });
    assert.deepEqual({ statusCode: o.statusCode, failure: o.failure }, { statusCode: null, failure: { status: 'failed', retryable: true, error: 'timeout after 300 ms' } });
    const stop = new AbortController();
    const pending = post('/hang', { signal: stop.signal });
    await new Promise((r) => setTimeout(r, 50));
    stop.abort();
    assert.deepEqual((await pending).failure, { status: 'failed', retryable: true, error: 'delivery interrupted' });
  });
});

describe('the network guard', () => {
  test('a name that resolves to a private address is refused at connect time, permanently, without a request', async () => {
    const guarded = createDeliveryAgent(parseAddressPolicy(''), { timeoutMs: 2_000, connections: 1 });
    try {
      const count = seen.length;
      const o = await postSigned({ url: origin.replace('127.0.0.1', 'localhost') + '/ok', id: 'x', body: '{}', signer: createSigner('whsec_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA'), agent: guarded, timeoutMs: 2_000, userAgent: 't' });
      assert.deepEqual(o.failure, { status: 'failed', retryable: false, error: 'refused to connect: private or reserved address' });
      assert.equal(seen.length, count);
    } finally {
      await guarded.close();
    }
  });
});
