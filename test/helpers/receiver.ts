/**
 * The shared webhook receiver of the tests: a real HTTP server (node:http on
 * 127.0.0.1) that records every request, answers as the test scripts it, and verifies every request's
 * Standard Webhooks signature (`webhook-id`, `webhook-timestamp`, `webhook-signature`) with the official
 * `standardwebhooks` package, the way the README tells a company's receiver to (not with the service's
 * own signing code). It serves the message webhook provider (src/providers/webhook.ts) and event
 * endpoints (docs/events.md) alike; one receiver can stand for several endpoints, each on
 * its own path with its own secret (`secretFor`).
 *
 * Scripted answers: a status; `{ status, headers?, body?, delayMs? }`; `'hang'` (reads the request,
 * never answers); `'down'` (resets the connection); `'garbage'` (answers bytes that are not HTTP).
 *
 * Also `startCountingReceiverProcess` for the benchmarks: a receiver in a child process (so that it
 * takes no time from the measured process's event loop) that answers 200 at once and only counts.
 */
import { fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { Webhook } from 'standardwebhooks';

/** One request the receiver saw. */
export interface Received {
  /** The `webhook-id` header ('' when absent). */
  id: string;
  /** How many requests with the same key (default: path and webhook-id) came so far, this one included (1 = first attempt). */
  n: number;
  method: string;
  /** The request path with its query (`req.url`). */
  path: string;
  headers: IncomingHttpHeaders;
  /** The raw body as UTF-8 text. */
  text: string;
  /** The body parsed as JSON (undefined when it is not JSON). */
  body: any;
  /** null when the Standard Webhooks signature verified with the path's secret; why not otherwise. */
  signatureError: string | null;
  /** The status answered (0: hung, reset or garbage, or not answered yet). */
  answered: number;
  /** When it arrived, by the receiver's clock (milliseconds since the epoch). */
  at: number;
}

/** What the receiver does with one request. */
export type Scripted = number | { status: number; headers?: Record<string, string>; body?: string; delayMs?: number } | 'hang' | 'down' | 'garbage';

export interface ReceiverOptions {
  /** Decides each answer (default 200); can be replaced later through `receiver.answer`. */
  answer?: (r: Received) => Scripted;
  /** The secret (whsec_…) of paths without one of their own; default: a fresh random one. */
  secret?: string;
  /** What counts as "the same request again" for `n`; default: the path and the webhook-id. */
  keyOf?: (r: Received) => string;
  /** Where `at` comes from (a FakeClock in tests that move time); default: Date. */
  clock?: { now(): number };
  /** The port to listen on (default: a free one), e.g. one a test kept refusing connections on. */
  port?: number;
  /** Called once a request's answer has been written (after its `delayMs`); not for hang, down or garbage. */
  onAnswer?: (r: Received) => void;
  /** How long an idle keep-alive connection stays open (ms; default Node's 5 s). */
  keepAliveTimeoutMs?: number;
}

/** A running receiver. */
export interface WebhookReceiver {
  /** `http://127.0.0.1:<port>`: endpoints use paths below it. */
  origin: string;
  /** `origin + '/hooks'`: the default endpoint. */
  url: string;
  /** The secret requests without a path secret are verified with. */
  secret: string;
  /** Every request, in arrival order. */
  seen: Received[];
  /** TCP connections accepted so far (a guard that must not connect shows as none, not only as no request). */
  readonly connections: number;
  /** The scripted answer; assign to change it (keep the previous one to restore it). */
  answer: (r: Received) => Scripted;
  /** Verify requests to `path` with `secret` (a whsec_ secret; `{ format: 'raw' }` for a raw one). */
  secretFor(path: string, secret: string, opts?: { format: 'raw' }): void;
  /** Requests answered 2xx, grouped by webhook-id (only those to `path` when given). */
  delivered(path?: string): Map<string, Received[]>;
  /** Requests whose signature did not verify. */
  signatureFailures(): Received[];
  close(): Promise<void>;
}

/** A fresh `whsec_` secret (24 random bytes). */
export function newSecret(): string {
  return 'whsec_' + randomBytes(24).toString('base64');
}

/** Starts a receiver on 127.0.0.1. */
export async function startReceiver(opts: ReceiverOptions = {}): Promise<WebhookReceiver> {
  const secret = opts.secret ?? newSecret();
  const fallback = new Webhook(secret);
  const bySecretPath = new Map<string, Webhook>();
  const counts = new Map<string, number>();
  const keyOf = opts.keyOf ?? ((r: Received) => `${r.path}|${r.id}`);
  const clock = opts.clock ?? Date;
  const seen: Received[] = [];

  const verify = (path: string, text: string, headers: IncomingHttpHeaders): string | null => {
    try {
      (bySecretPath.get(path) ?? fallback).verify(text, headers as Record<string, string>);
      return null;
    } catch (err) {
      return (err as Error).message;
    }
  };

  const respond = (req: IncomingMessage, res: ServerResponse, entry: Received, a: Scripted) => {
    if (a === 'hang') return;
    if (a === 'down') return void req.socket.destroy();
    if (a === 'garbage') return void req.socket.end('this is not HTTP\r\n\r\n');
    const { status, headers, body } = typeof a === 'number' ? { status: a, headers: undefined, body: undefined } : a;
    entry.answered = status;
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(body ?? (status < 300 ? '{"ok":true}' : '{"error":"scripted"}'));
    opts.onAnswer?.(entry);
  };

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      let body: unknown;
      try { body = JSON.parse(text); } catch { body = undefined; }
      const path = req.url ?? '';
      const entry: Received = {
        id: String(req.headers['webhook-id'] ?? ''), n: 0, method: req.method ?? '', path, headers: req.headers, text, body,
        signatureError: verify(path, text, req.headers), answered: 0, at: clock.now(),
      };
      const key = keyOf(entry);
      entry.n = (counts.get(key) ?? 0) + 1;
      counts.set(key, entry.n);
      seen.push(entry);
      const a = receiver.answer(entry);
      const delay = typeof a === 'object' ? a.delayMs : undefined;
      if (delay) setTimeout(() => respond(req, res, entry, a), delay);
      else respond(req, res, entry, a);
    });
  });
  if (opts.keepAliveTimeoutMs !== undefined) server.keepAliveTimeout = opts.keepAliveTimeoutMs;
  let connections = 0;
  server.on('connection', () => { connections++; });
  await new Promise<void>((resolve) => server.listen(opts.port ?? 0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const receiver: WebhookReceiver = {
    origin,
    url: `${origin}/hooks`,
    secret,
    seen,
    get connections() { return connections; },
    answer: opts.answer ?? (() => 200),
    secretFor(path, s, o) {
      bySecretPath.set(path, o ? new Webhook(s, o) : new Webhook(s));
    },
    delivered(path) {
      const out = new Map<string, Received[]>();
      for (const r of seen) {
        if ((path === undefined || r.path === path) && r.answered >= 200 && r.answered < 300) out.set(r.id, [...(out.get(r.id) ?? []), r]);
      }
      return out;
    },
    signatureFailures: () => seen.filter((r) => r.signatureError !== null),
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return receiver;
}

/** A free port on 127.0.0.1 that nothing listens on (connections to it are refused until a test listens). */
export async function refusingPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

/** A receiver child process of the benchmarks (answers 200 at once, counts requests). */
export interface CountingReceiver {
  /** `http://127.0.0.1:<port>`. */
  url: string;
  /** The child's process id (for its CPU and memory in /proc). */
  pid: number;
  /** Requests answered so far. */
  count(): Promise<number>;
  stop(): void;
}

const SELF = fileURLToPath(import.meta.url);

/** Forks this module as a counting receiver (see {@link CountingReceiver}); it reports its port when ready. */
export async function startCountingReceiverProcess(): Promise<CountingReceiver> {
  const child = fork(SELF, ['--counting-receiver'], { stdio: 'inherit' });
  const port = await new Promise<number>((resolve) => child.once('message', (m: any) => resolve(m.port)));
  return {
    url: `http://127.0.0.1:${port}`,
    pid: child.pid!,
    count: () => {
      child.send('count');
      return new Promise<number>((resolve) => child.once('message', (m: any) => resolve(m.count)));
    },
    stop: () => child.send('stop'),
  };
}

/** The child's side: listen, report the port, answer 200, count; `count` and `stop` over IPC. */
async function runCountingReceiver(): Promise<void> {
  let count = 0;
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      count++;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{}');
    });
  });
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  process.send!({ port: (server.address() as AddressInfo).port });
  process.on('message', (m) => {
    if (m === 'count') process.send!({ count });
    if (m === 'stop') server.close(() => process.exit(0));
  });
}

if (process.argv[1] === SELF && process.argv.includes('--counting-receiver')) await runCountingReceiver();
