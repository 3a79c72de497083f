/**
 * Audience benchmark (docs/audience.md "Measurements"): the preview of a three-condition dynamic
 * segment filter on a large company, and the fan-out of a campaign send to a dynamic segment against
 * one to a static segment of the same members.
 *
 *   node bench/audience-perf.ts [--db postgres://postgres@127.0.0.1:5432/postgres | --db pglite]
 *                               [--contacts 1000000] [--fanout 500000] [--requests 40] [--rounds 2]
 *
 * Defaults: on PostgreSQL 1,000,000 contacts and a fan-out of 500,000; on PGlite 100,000 contacts
 * and no fan-out (`--fanout` counts only on PostgreSQL: the fan-out's progress is read from the
 * database, which on PGlite belongs to the service process).
 *
 * Setup (not measured): an in-process service on a fresh database (`cms_bench_audience` next to the
 * one in the URL, or a new PGlite directory) makes a company, a campaign, a static segment and a
 * dynamic one (`{"tag": "newsletter"}`) through the operator API; set-based SQL writes the contacts
 * (seven cities in `variables.city`; tag `vip` on every 5th, `newsletter` on every 2nd), a delivered
 * campaign message for every 3rd contact (delivered 0 to 59 days ago, in batches of 1,000), and makes
 * every `newsletter` contact a member of the static segment; VACUUM ANALYZE. The plans of the preview's
 * count and of the static segment's member read are printed (`EXPLAIN (ANALYZE, COSTS OFF)`).
 *
 * Measured, with the service as its own process (`node bin/cms.js serve`, role all):
 * 1. Preview: `POST /admin/companies/{id}/segments/preview` with
 *    `{"all": [{"attribute": "city", "op": "eq", "value": "Berlin"}, {"tag": "vip"},
 *    {"message": "delivered", "within": "30d"}]}`, 3 unmeasured, then `--requests` one after another,
 *    each timed to the last byte: p50, p95, max (targets: p95 <= 500 ms on PostgreSQL with 1,000,000
 *    contacts, <= 1 s on PGlite with 100,000).
 * 2. Fan-out (PostgreSQL): `--rounds` times, a send to the static segment, then one to the dynamic
 *    segment (the same contacts). Each send is paused right after its 202, so that what is timed is
 *    the fan-out alone (a paused batch is still written, nothing is handed to a provider): from the
 *    request to the moment `batches.fanned_out` reaches the batch's total (polled every 100 ms);
 *    messages written per second. The batch is then cancelled and the next send waits for it.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { sql } from 'kysely';
import pg from 'pg';
import pino from 'pino';
import { loadConfig } from '../src/config.ts';
import { explainCount } from '../src/db/segment-filter.ts';
import { checkFilter } from '../src/domain/dynamic-segments.ts';
import { startService } from '../src/service.ts';
import { percentile } from './lib/accept-load.ts';
import { freePort, freshDatabase, operatorApi, startServeProcess } from './lib/serve.ts';

const ADMIN = 'bench-audience-admin-7Jr2Pw5Ns8Kd3Lq';
const SECRETS = 'bench-audience-secrets-4Vh9Xc1Tb6Mz2Gf';
const DB_NAME = 'cms_bench_audience';
const PREVIEW_FILTER = { all: [{ attribute: 'city', op: 'eq', value: 'Berlin' }, { tag: 'vip' }, { message: 'delivered', within: '30d' }] };

const { values: args } = parseArgs({
  options: {
    db: { type: 'string', default: 'postgres://postgres@127.0.0.1:5432/postgres' },
    contacts: { type: 'string' },
    fanout: { type: 'string' },
    requests: { type: 'string', default: '40' },
    rounds: { type: 'string', default: '2' },
  },
});
const onPg = args.db !== 'pglite';
const CONTACTS = Number(args.contacts ?? (onPg ? 1_000_000 : 100_000));
const FANOUT = onPg ? Number(args.fanout ?? 500_000) : 0;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Ids { companyId: number; campaignId: number; staticId: number; dynamicId: number }


/** Makes the company and its data (see the module comment); prints the plans. */
async function setup(env: Record<string, string>): Promise<Ids> {
  // Set-based writes of a million rows take longer than a request's statement time limit.
  const service = await startService(loadConfig({ ...env, DB_STATEMENT_TIMEOUT: '10m' }), { role: 'api', logger: pino({ level: 'warn' }) });
  const base = await service.app.listen({ port: 0, host: '127.0.0.1' });
  const admin = operatorApi(base, ADMIN);
  const companyId: number = (await admin('POST', '/admin/companies', { name: 'Audience bench', subscription_active: true })).company_id;
  const campaignId: number = (await admin('POST', `/admin/companies/${companyId}/campaigns`, { name: 'Newsletter', template: { body: 'Hi {{ first_name }}, news from {{ city }}' }, expire_after: null })).campaign_id;
  const staticId: number = (await admin('POST', `/admin/companies/${companyId}/segments`, { name: 'Newsletter (list)' })).segment_id;
  const dynamicId: number = (await admin('POST', `/admin/companies/${companyId}/segments`, { name: 'Newsletter (rule)', filter: { tag: 'newsletter' } })).segment_id;
  const db = service.deps.database.db;
  const step = async (what: string, q: { execute(db: unknown): Promise<unknown> }) => {
    const t = Date.now();
    await q.execute(db);
    console.error(`  ${what}: ${((Date.now() - t) / 1000).toFixed(1)} s`);
  };
  await step(`${CONTACTS} contacts`, sql`
    INSERT INTO contacts (company_id, phone, sha256_plus, sha256_bare, first_name, variables, tags, country)
    SELECT ${companyId}, p.phone, sha256(convert_to(p.phone, 'UTF8')), sha256(convert_to(substr(p.phone, 2), 'UTF8')),
           'Name ' || i, jsonb_build_object('city', (ARRAY['Berlin','Köln','Hamburg','München','Leipzig','Dresden','Bremen'])[1 + i % 7], 'plan', (ARRAY['free','pro','team'])[1 + i % 3]),
           (CASE WHEN i % 5 = 0 THEN ARRAY['vip'] ELSE ARRAY[]::text[] END) || (CASE WHEN i % 2 = 0 THEN ARRAY['newsletter'] ELSE ARRAY[]::text[] END), 'DE'
    FROM generate_series(1, ${CONTACTS}::int) AS i, LATERAL (SELECT '+49151' || lpad(i::text, 8, '0') AS phone) p`);
  const delivered = Math.floor(CONTACTS / 3);
  await step(`${Math.ceil(delivered / 1000)} batches`, sql`
    INSERT INTO batches (batch_id, company_id, kind, source_id, status, total, items, template, created_at, completed_at)
    SELECT md5('audience-bench' || b)::uuid, ${companyId}, 'campaign', ${campaignId}, 'completed', 1000, '[]', '{"body":"Hi"}', now() - interval '60 days', now() - interval '60 days'
    FROM generate_series(0, ${Math.ceil(delivered / 1000) - 1}::int) AS b`);
  await step(`${delivered} delivered messages`, sql`
    INSERT INTO messages (message_id, batch_id, company_id, seq, contact_id, phone, status, attempts, sent_at, delivered_at, rendered, updated_at)
    SELECT gen_random_uuid(), md5('audience-bench' || ((k - 1) / 1000))::uuid, ${companyId}, (k - 1) % 1000, contact_id, phone, 'delivered', 1,
           now() - (k % 60) * interval '1 day' - interval '1 minute', now() - (k % 60) * interval '1 day', '{"body":"Hi"}', now() - (k % 60) * interval '1 day'
    FROM (SELECT contact_id, phone, row_number() OVER (ORDER BY contact_id) AS k FROM contacts WHERE company_id = ${companyId} AND contact_id % 3 = 0) c`);
  await step('static segment members', sql`
    INSERT INTO segment_members (segment_id, contact_id) SELECT ${staticId}, contact_id FROM contacts WHERE company_id = ${companyId} AND tags @> ARRAY['newsletter']`);
  await step('vacuum analyze', sql`VACUUM ANALYZE`);

  const node = await checkFilter(db, companyId, PREVIEW_FILTER);
  const compiled = explainCount({ companyId, now: Date.now() }, node).compile(db);
  const plan = await db.executeQuery({ ...compiled, sql: compiled.sql.replace(/^EXPLAIN /, 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) ') });
  console.log(`\nPlan of the preview's count:\n\n\`\`\`\n${(plan.rows as Record<string, string>[]).map((r) => Object.values(r)[0]).join('\n')}\n\`\`\``);
  const members = await sql<Record<string, string>>`EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF)
    SELECT c.phone FROM segment_members m JOIN contacts c ON c.contact_id = m.contact_id
    WHERE m.segment_id = ${staticId} AND c.company_id = ${companyId} ORDER BY c.contact_id LIMIT 1000001`.execute(db);
  console.log(`\nPlan of the static segment's member read at fan-out:\n\n\`\`\`\n${members.rows.map((r) => Object.values(r)[0]).join('\n')}\n\`\`\``);
  await service.close();
  return { companyId, campaignId, staticId, dynamicId };
}

async function main(): Promise<void> {
  const machine = `${os.cpus()[0]?.model ?? '?'} × ${os.cpus().length}, load ${os.loadavg()[0].toFixed(1)}`;
  console.log(`# Audience benchmark, ${args.db === 'pglite' ? 'PGlite' : 'PostgreSQL'}, ${CONTACTS} contacts, ${new Date().toISOString()}, ${machine}`);
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cms-bench-audience-'));
  const env: Record<string, string> = { DATA_DIR: dataDir, ADMIN_TOKEN: ADMIN, SECRETS_KEY: SECRETS, LOG_LEVEL: 'warn' };
  if (onPg) env.DATABASE_URL = await freshDatabase(args.db!, DB_NAME);
  const ids = await setup(env);
  const port = await freePort();
  const child = await startServeProcess(env, port);
  const base = `http://127.0.0.1:${port}`;
  const admin = operatorApi(base, ADMIN);
  try {
    const times: number[] = [];
    let count = 0;
    for (let i = 0; i < 3 + Number(args.requests); i++) {
      const t = performance.now();
      count = (await admin('POST', `/admin/companies/${ids.companyId}/segments/preview`, { filter: PREVIEW_FILTER })).count;
      if (i >= 3) times.push(performance.now() - t);
    }
    times.sort((a, b) => a - b);
    console.log(`\n| measure | value |\n|---|---|\n| preview of the three-condition filter (${count} match), p50 / p95 / max | ${percentile(times, 50).toFixed(0)} / ${percentile(times, 95).toFixed(0)} / ${times.at(-1)!.toFixed(0)} ms (${times.length} requests) |`);

    if (FANOUT > 0) {
      const client = new pg.Client({ connectionString: env.DATABASE_URL });
      await client.connect();
      const rows: string[] = [];
      for (let round = 1; round <= Number(args.rounds); round++) {
        for (const [kind, segmentId] of [['static', ids.staticId], ['dynamic', ids.dynamicId]] as const) {
          const t0 = performance.now();
          const sent = await admin('POST', `/admin/campaigns/${ids.campaignId}/sends`, { segment_id: segmentId });
          const answered = performance.now() - t0;
          await admin('POST', `/admin/batches/${sent.batch_id}/pause`);
          let done = 0;
          for (;;) {
            const r = (await client.query<{ fanned_out: number; total: number }>('SELECT fanned_out, total FROM batches WHERE batch_id = $1', [sent.batch_id])).rows[0];
            if (r.total > 0 && r.fanned_out >= r.total) { done = performance.now() - t0; break; }
            await sleep(100);
          }
          rows.push(`| round ${round}, ${kind} segment, ${sent.plan.total} members | ${answered.toFixed(0)} ms | ${(done / 1000).toFixed(1)} s | ${Math.round(sent.plan.total / (done / 1000))} |`);
          console.error(rows.at(-1));
          await admin('POST', `/admin/batches/${sent.batch_id}/cancel`);
          for (;;) {
            if ((await admin('GET', `/admin/batches/${sent.batch_id}`)).status === 'completed') break;
            await sleep(500);
          }
        }
      }
      console.log(`\n| send | 202 after | fanned out after | messages written/s |\n|---|---|---|---|\n${rows.join('\n')}`);
      await client.end();
    }
  } finally {
    child.kill();
    await new Promise((r) => child.once('exit', r));
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
