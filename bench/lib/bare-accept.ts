/**
 * The HTTP side and the group commit of the bare durable accept servers (docs/benchmarks.md)
 * (bench/bare-accept-server.ts on PostgreSQL, bench/bare-embedded-server.ts on PGlite): only the
 * commit differs between them.
 *
 * Plain `node:http` on 127.0.0.1: reads the body, `JSON.parse`, checks its shape (an object with an
 * integer `automation_id` and a non-empty `contacts` array of objects whose `phone` is a string,
 * optional `first_name`/`last_name` strings and `variables` object; a `service-api-key` header),
 * hands the batch (at most 50 contacts) to the group commit and answers 200
 * `{"batch_id","contacts","status":"accepted"}` only after its commit; 400 for bad JSON, 422 for a
 * wrong shape, 503 when the commit failed. Sends 'ready' to a parent process once listening.
 */
import http from 'node:http';
import { randomUUID } from 'node:crypto';

/** One accepted batch waiting for its commit: a new uuid, the automation id as company, contacts count and JSON, and its answer. */
export interface Pending { id: string; company: number; total: number; items: string; done: (err?: unknown) => void }

/** How the group commit runs: `commit` writes one group in ONE transaction; at most `maxGroup` a group, `maxInFlight` open at once. */
export interface GroupCommit { commit: (group: Pending[]) => Promise<void>; maxGroup: number; maxInFlight: number }

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The shape check: the contacts array when the body is a trigger request, else undefined. */
function check(body: unknown): Record<string, unknown>[] | undefined {
  if (!isObject(body) || !Number.isInteger(body.automation_id) || !Array.isArray(body.contacts) || body.contacts.length === 0) return undefined;
  for (const c of body.contacts as unknown[]) {
    if (!isObject(c) || typeof c.phone !== 'string') return undefined;
    if (c.first_name !== undefined && typeof c.first_name !== 'string') return undefined;
    if (c.last_name !== undefined && typeof c.last_name !== 'string') return undefined;
    if (c.variables !== undefined && !isObject(c.variables)) return undefined;
  }
  return body.contacts as Record<string, unknown>[];
}

function answer(res: http.ServerResponse, status: number, body: string): void {
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

/**
 * Starts the bare accept server on `port` with the group commit `gc`: the requests that arrive
 * while `gc.maxInFlight` transactions are open are gathered, and each group resolves (or fails)
 * all its requests together. Returns the listening server.
 */
export function serveBareAccept(port: number, gc: GroupCommit): http.Server {
  let waiting: Pending[] = [];
  let inFlight = 0;
  /** Starts transactions while there is work and fewer than maxInFlight are open. */
  const pump = (): void => {
    while (waiting.length > 0 && inFlight < gc.maxInFlight) {
      const group = waiting.length <= gc.maxGroup ? waiting : waiting.slice(0, gc.maxGroup);
      waiting = group === waiting ? [] : waiting.slice(gc.maxGroup);
      inFlight++;
      gc.commit(group).then(() => { for (const p of group) p.done(); }, (err) => { for (const p of group) p.done(err); })
        .finally(() => { inFlight--; pump(); });
    }
  };
  return http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      let body: unknown;
      try { body = JSON.parse(Buffer.concat(chunks).toString('utf8')); } catch { return answer(res, 400, '{"detail":"invalid JSON"}'); }
      const contacts = check(body);
      if (!contacts || typeof req.headers['service-api-key'] !== 'string') return answer(res, 422, '{"detail":"invalid body"}');
      const id = randomUUID();
      const total = Math.min(contacts.length, 50);
      waiting.push({
        id, company: (body as { automation_id: number }).automation_id, total, items: JSON.stringify(contacts.slice(0, 50)),
        done: (err) => err ? answer(res, 503, '{"detail":"not committed"}') : answer(res, 200, `{"batch_id":"${id}","contacts":${total},"status":"accepted"}`),
      });
      pump();
    });
  }).listen(port, '127.0.0.1', () => process.send?.('ready'));
}
