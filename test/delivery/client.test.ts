/**
 * The one outbound client (src/delivery/client.ts) against a real HTTP server on 127.0.0.1: an answer
 * larger than its cap is cut off after the cap (the connection dropped, the rest never read) and
 * classified as a retryable failure, for a WhatsApp message send (providers/whatsapp/send.ts, 2xx and
 * error answers alike), for Meta's template endpoints (templates-api.ts, 4 MiB cap) and for a bare
 * request; an answer within the cap is read whole; a literal private address is refused before any
 * connection.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createDeliveryClient, type DeliveryClient } from '../../src/delivery/client.ts';
import { RESPONSE_CAP, TEMPLATES_RESPONSE_CAP } from '../../src/delivery/exchange.ts';
import { parseAddressPolicy } from '../../src/delivery/network-guard.ts';
import type { WhatsappPacing } from '../../src/providers/whatsapp/pacing.ts';
import { whatsappProvider } from '../../src/providers/whatsapp/send.ts';
import { createTemplatesApi, GraphApiError } from '../../src/providers/whatsapp/templates-api.ts';
import type { Rendered } from '../../src/domain/render.ts';

/** What the server streams for a huge answer: far more than any cap (64 MiB). */
const HUGE = 64 * 1024 * 1024;

/** Per huge answer: bytes handed to the socket, and whether the whole answer went out. */
const streams: { path: string; written: number; finished: boolean; closed: Promise<void> }[] = [];
let server: Server;
let origin: string;
let client: DeliveryClient;

/** Streams HUGE bytes of `x` with `status`, following backpressure; records how far it got. */
function huge(path: string, res: ServerResponse, status: number): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  let done: () => void = () => {};
  const entry = { path, written: 0, finished: false, closed: new Promise<void>((r) => { done = r; }) };
  streams.push(entry);
  const chunk = Buffer.alloc(64 * 1024, 120);
  res.on('error', () => {});
  res.on('close', () => done());
  res.on('finish', () => { entry.finished = true; });
  const pump = () => {
    while (entry.written < HUGE) {
      if (res.destroyed) return;
      entry.written += chunk.length;
      if (!res.write(chunk)) return void res.once('drain', pump);
    }
    res.end();
  };
  pump();
}

before(async () => {
  server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const path = (req.url ?? '').split('?')[0];
      if (path === '/v1/1555/messages') return huge(path, res, 200);
      if (path === '/v1/1666/messages') return huge(path, res, 500);
      if (path === '/v1/1777/messages') return res.writeHead(200, { 'content-type': 'application/json' }).end('{"messages":[{"id":"wamid.OK"}]}');
      if (path === '/v1/waba-huge/message_templates') return huge(path, res, 200);
      if (path === '/exact') return res.writeHead(200).end('z'.repeat(RESPONSE_CAP));
      return huge(path, res, 200);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  client = createDeliveryClient({ policy: parseAddressPolicy('127.0.0.1'), timeoutMs: 10_000 });
});
after(async () => {
  await client.close();
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

const rendered = {
  message_id: '00000000-0000-4000-8000-000000000001', company_id: 1, to: '+4915112345678',
  header: { type: 'none' }, body: 'Hi', buttons: [],
  whatsapp: { name: 'hello', language: 'en', header_parameters: [], body_parameters: [], button_parameters: [] },
} as unknown as Rendered;
const pacing = { slot: async () => true } as unknown as WhatsappPacing;
const sender = (phoneNumberId: string) => whatsappProvider({ apiBaseUrl: `${origin}/v1`, phoneNumberId, accessToken: 'token-never-shown', client, pacing, ratePerSecond: 1000 });

/** Waits until the server saw the connection of `path`'s last huge answer close, and returns that answer. */
async function lastStream(path: string) {
  const s = streams.filter((x) => x.path === path).at(-1)!;
  await s.closed;
  return s;
}

test('a WhatsApp send whose 2xx answer is larger than 64 KiB is cut off and a retryable failure', async () => {
  const result = await sender('1555').send(rendered);
  assert.deepEqual(result, { status: 'failed', retryable: true, error: `response larger than ${RESPONSE_CAP} bytes` });
  const s = await lastStream('/v1/1555/messages');
  assert.equal(s.finished, false, 'the answer was not read to its end');
  assert.ok(s.written < HUGE, `the connection was dropped (${s.written} bytes written of ${HUGE})`);
});

test('a WhatsApp error answer larger than 64 KiB is cut off too: classified before the code table sees it', async () => {
  const result = await sender('1666').send(rendered);
  assert.deepEqual(result, { status: 'failed', retryable: true, error: `response larger than ${RESPONSE_CAP} bytes` });
  const s = await lastStream('/v1/1666/messages');
  assert.equal(s.finished, false);
});

test('a WhatsApp answer within the cap is read whole (the wamid is kept)', async () => {
  assert.deepEqual(await sender('1777').send(rendered), { status: 'sent', providerMessageId: 'wamid.OK' });
});

test("Meta's template list larger than 4 MiB is refused after 4 MiB, naming the cap and never the token", async () => {
  const api = createTemplatesApi({ client });
  await assert.rejects(api.list({ apiBaseUrl: `${origin}/v1`, wabaId: 'waba-huge', accessToken: 'token-never-shown' }), (err: unknown) => {
    assert.ok(err instanceof GraphApiError);
    assert.equal(err.message, `Meta answered HTTP 200 with a body larger than ${TEMPLATES_RESPONSE_CAP} bytes`);
    assert.equal(err.status, 200);
    return true;
  });
  const s = await lastStream('/v1/waba-huge/message_templates');
  assert.equal(s.finished, false);
});

test('a bare request keeps exactly the first `cap` bytes of a larger answer, with its status; an answer of exactly the cap is whole', async () => {
  const x = await client.request('messages', { method: 'GET', url: `${origin}/other`, headers: {}, cap: 1000 });
  assert.equal(x.answered, false);
  assert.equal(x.statusCode, 200);
  assert.equal(x.body.length, 1000);
  assert.deepEqual(!x.answered && x.failure, { status: 'failed', retryable: true, error: 'response larger than 1000 bytes' });
  await lastStream('/other');

  const exact = await client.request('messages', { method: 'GET', url: `${origin}/exact`, headers: {} });
  assert.equal(exact.answered, true);
  assert.equal(exact.body.length, RESPONSE_CAP);
});

test('a literal private address is refused before any connection; a name is left to the connect-time guard', () => {
  const strict = createDeliveryClient({ policy: parseAddressPolicy(''), timeoutMs: 1_000 });
  assert.equal(strict.literalProblem('http://10.1.2.3/hook'), 'refused to connect to 10.1.2.3: private or reserved address');
  assert.equal(strict.literalProblem('http://[::1]/hook'), 'refused to connect to ::1: private or reserved address');
  assert.equal(strict.literalProblem('https://hooks.example/x'), null);
  assert.equal(strict.literalProblem('not a url'), 'the provider URL is not a URL');
  assert.equal(client.literalProblem(`${origin}/x`), null, 'allowed by PROVIDER_ALLOWED_HOSTS');
});
