/**
 * The bare delivery limit (docs/benchmarks.md "A million-recipient campaign"): the least a Node
 * process can do to deliver stored messages to a webhook, to hold the service's delivery rate against.
 *
 *   node bench/bare-delivery.ts --db postgres://postgres@127.0.0.1:5432/bench_million --url http://127.0.0.1:PORT/hook \
 *        --secret whsec_... [--table bare_messages] [--claim 500] [--connections 128]
 *
 * The table (made by bench/million.ts from the messages the service delivered) has the columns
 * `message_id uuid`, `seq int`, `rendered jsonb`, `status text` ('pending' at the start) and
 * `sent_at timestamptz`. The program claims `--claim` pending rows at a time, lowest `seq` first
 * (`UPDATE … status = 'claimed'` of a `SELECT … FOR UPDATE SKIP LOCKED`, so several copies of it
 * share a table without overlap), a new chunk as soon as fewer than `--connections` rows are waiting;
 * POSTs each row's `rendered` as JSON with up to `--connections` requests in flight on one keep-alive
 * undici Agent of as many connections (default the service's DEFAULT_CONNECTIONS.messages, delivery/client.ts), signed
 * with the `standardwebhooks` library as the service signs (delivery/sign.ts: `webhook-id` the
 * message id, `webhook-timestamp`, `webhook-signature`); and marks the 2xx ones `sent` in one UPDATE
 * per 100 rows or 200 ms (the service's flush, queue/handlers/messages-deliver.ts). Nothing else:
 * no lease renewal, retries, pause/cancel checks, counting triggers, metrics or logs.
 *
 * Ends when a claim finds nothing and every request is answered and marked. Prints one JSON line:
 * `{sent, failed, ms, rate, cpu_ms, max_rss_mb}` (ms of wall time from the first claim to the last
 * mark, messages/s, this process's user + system CPU in ms, its peak RSS in MB).
 */
import { parseArgs } from 'node:util';
import pg from 'pg';
import { Webhook } from 'standardwebhooks';
import { Agent, request } from 'undici';
import { DEFAULT_CONNECTIONS } from '../src/delivery/client.ts';

const { values: args } = parseArgs({
  options: {
    db: { type: 'string' },
    url: { type: 'string' },
    secret: { type: 'string' },
    table: { type: 'string', default: 'bare_messages' },
    claim: { type: 'string', default: '500' },
    connections: { type: 'string', default: String(DEFAULT_CONNECTIONS.messages) },
  },
});
if (!args.db || !args.url || !args.secret) throw new Error('--db, --url and --secret are required');
if (!/^[a-z_][a-z0-9_]*$/.test(args.table!)) throw new Error(`not a table name: ${args.table}`);
const table = args.table!;
const claimSize = Number(args.claim);
const connections = Number(args.connections);
const FLUSH_ROWS = 100;
const FLUSH_MS = 200;

const pool = new pg.Pool({ connectionString: args.db, max: 4 });
const signer = new Webhook(args.secret);
const agent = new Agent({ connections, keepAliveTimeout: 10_000, keepAliveMaxTimeout: 60_000 });

interface Row { message_id: string; rendered: unknown }
const queue: Row[] = [];
let exhausted = false;
let claiming: Promise<void> | null = null;
let done: string[] = [];
let writes: Promise<unknown> = Promise.resolve();
let sent = 0;
let failed = 0;

/** Claims the next chunk (see the module comment); sets `exhausted` when it finds fewer than a chunk. */
const claim = (): Promise<void> => claiming ??= (async () => {
  const { rows } = await pool.query<Row>(
    `UPDATE ${table} t SET status = 'claimed'
     FROM (SELECT message_id FROM ${table} WHERE status = 'pending' ORDER BY seq LIMIT $1 FOR UPDATE SKIP LOCKED) p
     WHERE t.message_id = p.message_id
     RETURNING t.message_id, t.rendered`, [claimSize]);
  if (rows.length < claimSize) exhausted = true;
  queue.push(...rows);
})().finally(() => { claiming = null; });

/** Marks the answered rows sent (one UPDATE, chained so that marks never overlap). */
const flush = (): Promise<unknown> => {
  if (done.length === 0) return writes;
  const ids = done;
  done = [];
  writes = writes.then(() => pool.query(`UPDATE ${table} SET status = 'sent', sent_at = now() WHERE message_id = ANY($1::uuid[])`, [ids]));
  return writes;
};

/** One POST of one message, signed; true on a 2xx answer read whole. */
async function post(row: Row): Promise<boolean> {
  const body = JSON.stringify(row.rendered);
  const now = new Date();
  const res = await request(args.url!, {
    method: 'POST',
    dispatcher: agent,
    headers: {
      'content-type': 'application/json',
      'user-agent': 'bare-delivery/1',
      'webhook-id': row.message_id,
      'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
      'webhook-signature': signer.sign(row.message_id, now, body),
    },
    body,
  });
  await res.body.text();
  return res.statusCode >= 200 && res.statusCode < 300;
}

const lane = async (): Promise<void> => {
  for (;;) {
    if (queue.length < connections && !exhausted) void claim();
    const row = queue.shift();
    if (!row) {
      if (exhausted && !claiming) return;
      await (claiming ?? claim());
      continue;
    }
    if (await post(row).catch(() => false)) {
      sent++;
      done.push(row.message_id);
      if (done.length >= FLUSH_ROWS) void flush();
    } else failed++;
  }
};

const cpu0 = process.cpuUsage();
const t0 = performance.now();
const timer = setInterval(() => void flush(), FLUSH_MS);
await claim();
await Promise.all(Array.from({ length: connections }, lane));
clearInterval(timer);
await flush();
const ms = performance.now() - t0;
const cpu = process.cpuUsage(cpu0);
console.log(JSON.stringify({
  sent, failed, ms: Math.round(ms), rate: Math.round(sent / (ms / 1000)),
  cpu_ms: Math.round((cpu.user + cpu.system) / 1000), max_rss_mb: Math.round(process.resourceUsage().maxRSS / 1024),
}));
await agent.close();
await pool.end();
