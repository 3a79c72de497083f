/**
 * Helpers of the event tests (receipts-and-events.md §5): an event receiver (node:http on 127.0.0.1)
 * that verifies EVERY request with the official `standardwebhooks` package and answers as the test
 * scripts it, plus shortcuts over the operator API (endpoint with a known secret, a send).
 */
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { eventually, type TestServer } from '../helpers/server.ts';

/** One request the receiver saw; `n` counts requests with the same webhook-id (1 = first). */
export interface EventSeen {
  id: string;
  n: number;
  endpointPath: string;
  headers: IncomingHttpHeaders;
  text: string;
  body: any;
  /** null when the signature verified; the error message otherwise. */
  signatureError: string | null;
  answered: number;
}

/** A scripted answer: a status (with optional headers/body), 'hang' (never answers), or 'down' (connection reset). */
export type EventAnswer = number | { status: number; headers?: Record<string, string>; body?: string } | 'hang' | 'down';

export interface EventReceiver {
  /** Base URL; endpoints use `${url}/<name>` paths so one receiver can serve several endpoints. */
  url: string;
  seen: EventSeen[];
  /** Sets the secret (whsec_…) requests to `path` are verified with. */
  secretFor(path: string, secret: string): void;
  /** Answered 2xx, by webhook-id. */
  delivered(path?: string): Map<string, EventSeen[]>;
  signatureFailures(): EventSeen[];
  answer: (seen: EventSeen) => EventAnswer;
  close(): Promise<void>;
}

/** Starts a receiver (default answer 200). */
export async function startEventReceiver(): Promise<EventReceiver> {
  const secrets = new Map<string, Webhook>();
  const seen: EventSeen[] = [];
  const counts = new Map<string, number>();
  const receiver: EventReceiver = {
    url: '',
    seen,
    secretFor(path, secret) { secrets.set(path, new Webhook(secret)); },
    delivered(path) {
      const out = new Map<string, EventSeen[]>();
      for (const s of seen) {
        if (path !== undefined && s.endpointPath !== path) continue;
        if (s.answered >= 200 && s.answered < 300) out.set(s.id, [...(out.get(s.id) ?? []), s]);
      }
      return out;
    },
    signatureFailures: () => seen.filter((s) => s.signatureError !== null),
    answer: () => 200,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const id = String(req.headers['webhook-id'] ?? '');
      const key = `${req.url}|${id}`;
      const n = (counts.get(key) ?? 0) + 1;
      counts.set(key, n);
      let body: unknown;
      try { body = JSON.parse(text); } catch { body = undefined; }
      let signatureError: string | null = 'no secret registered for ' + req.url;
      const wh = secrets.get(req.url ?? '');
      if (wh) {
        try {
          wh.verify(text, req.headers as Record<string, string>);
          signatureError = null;
        } catch (err) {
          signatureError = (err as Error).message;
        }
      }
      const entry: EventSeen = { id, n, endpointPath: req.url ?? '', headers: req.headers, text, body, signatureError, answered: 0 };
      seen.push(entry);
      const a = receiver.answer(entry);
      if (a === 'hang') return;
      if (a === 'down') {
        req.socket.destroy();
        return;
      }
      const status = typeof a === 'number' ? a : a.status;
      entry.answered = status;
      res.writeHead(status, { 'content-type': 'application/json', ...(typeof a === 'object' ? a.headers : {}) });
      res.end(typeof a === 'object' && a.body !== undefined ? a.body : status < 300 ? '{"ok":true}' : '{"error":"scripted"}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return receiver;
}

/** Registers an endpoint at `receiver.url + path` (all types unless given); the receiver learns its secret. */
export async function addEndpoint(s: TestServer, receiver: EventReceiver, companyId: number, path: string, events?: string[]): Promise<{ endpoint_id: number; secret: string; events: string[] }> {
  const ep = await s.admin('POST', `/admin/companies/${companyId}/event-endpoints`, { url: receiver.url + path, ...(events ? { events } : {}) }, 201);
  receiver.secretFor(path, ep.secret);
  return ep;
}

/** A distinct valid German mobile number for item `i` of run `run`. */
export function phone(run: number, i: number): string {
  return `+49152${String(run % 1000).padStart(3, '0')}${String(i).padStart(5, '0')}`;
}

/** Sends an API automation to `phones`; returns the batch id. */
export async function sendTo(s: TestServer, companyId: number, key: string, phones: string[]): Promise<string> {
  const automation = await s.admin('POST', `/admin/companies/${companyId}/automations`, { name: 'events', type: 'api', active: true, template: { body: 'Hi {{ first_name }}' } }, 201);
  const res = await s.api('/api/automations/send', { key, body: { automation_id: automation.automation_id, contacts: phones.map((p, i) => ({ phone: p, first_name: `F${i}` })) } });
  if (res.status !== 200) throw new Error(`send answered ${res.status}: ${res.text}`);
  return res.json.batch_id;
}

/** Waits until the batch is completed. */
export async function batchCompleted(s: TestServer, batchId: string, timeoutMs = 45_000): Promise<any> {
  return eventually(async () => {
    const b = await s.admin('GET', `/admin/batches/${batchId}`);
    return b.status === 'completed' ? b : undefined;
  }, timeoutMs);
}

/** Waits until `check(receiver)` holds (polling, real time). */
export function until(check: () => boolean, timeoutMs = 30_000): Promise<true> {
  return eventually(async () => check() || undefined, timeoutMs, 25);
}

export const RFC3339_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
