/**
 * Filter previews at the work limits (docs/benchmarks.md "Filter previews"): how long the costliest
 * filters the documented limits allow (test/helpers/widest-filters.ts, built from the limits in
 * src/domain/segment-filter.ts) take to preview on a large company, as a ratio to a one-condition
 * filter's preview measured in the same run.
 *
 *   node bench/filter-limits.ts [--db pglite | --db postgres://postgres@127.0.0.1:5432/postgres]
 *                               [--contacts N] [--messages M] [--requests 5]
 *
 * Defaults: on PGlite 100,000 contacts, on PostgreSQL 1,000,000; 5 messages a contact (each in a
 * completed campaign batch, sent, delivered or read days ago, so every message-derived condition has
 * rows to read and matches nobody).
 *
 * Setup (not measured): an in-process service on a fresh database (`cms_bench_filters` next to the one
 * in the URL, or a new PGlite directory) makes a company, a campaign and a static segment through the
 * operator API; set-based SQL writes the contacts (variables `score`, `joined`, `city`; every 7th has
 * the tag `vip`), the batches and messages, and every 10th contact into the static segment; VACUUM
 * ANALYZE. Measured, with the service as its own process (`node bin/cms.js serve`, role all): each
 * filter's `POST /admin/companies/{id}/segments/preview`, one unmeasured, then `--requests` one after
 * another, each timed to the last byte (the client is this process, which waits on the answer and
 * spends no measurable CPU meanwhile). The service's CPU time over the measured requests is reported.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { sql } from 'kysely';
import pino from 'pino';
import { loadConfig } from '../src/config.ts';
import { filterCost, parseFilter } from '../src/domain/segment-filter.ts';
import { startService } from '../src/service.ts';
import { widestFilters } from '../test/helpers/widest-filters.ts';
import { percentile } from './lib/accept-load.ts';
import { freePort, freshDatabase, operatorApi, startServeProcess } from './lib/serve.ts';

const ADMIN = 'bench-filters-admin-5Kq8Wz3Rt1Ym7Hc';
const SECRETS = 'bench-filters-secrets-9Pd2Lx6Nv4Bs8Qj';
const DB_NAME = 'cms_bench_filters';
const BASELINE = { tag: 'vip' };

const { values: args } = parseArgs({
  options: {
    db: { type: 'string', default: 'pglite' },
    contacts: { type: 'string' },
    messages: { type: 'string', default: '5' },
    requests: { type: 'string', default: '5' },
  },
});
const onPg = args.db !== 'pglite';
const CONTACTS = Number(args.contacts ?? (onPg ? 1_000_000 : 100_000));
const MESSAGES = Number(args.messages);

/** Makes the company and its data (see the module comment); its id and static segment's. */
async function setup(env: Record<string, string>): Promise<{ companyId: number; segmentId: number; campaignId: number }> {
  // Set-based writes of a million rows take longer than a request's statement time limit.
  const service = await startService(loadConfig({ ...env, DB_STATEMENT_TIMEOUT: '10m' }), { role: 'api', logger: pino({ level: 'warn' }) });
  const base = await service.app.listen({ port: 0, host: '127.0.0.1' });
  const admin = operatorApi(base, ADMIN);
  const companyId: number = (await admin('POST', '/admin/companies', { name: 'Filter bench', subscription_active: true })).company_id;
  const campaignId: number = (await admin('POST', `/admin/companies/${companyId}/campaigns`, { name: 'News', template: { body: 'Hi' } })).campaign_id;
  const segmentId: number = (await admin('POST', `/admin/companies/${companyId}/segments`, { name: 'List' })).segment_id;
  const db = service.deps.database.db;
  const step = async (what: string, q: { execute(db: unknown): Promise<unknown> }) => {
    const t = Date.now();
    await q.execute(db);
    console.error(`  ${what}: ${((Date.now() - t) / 1000).toFixed(1)} s`);
  };
  await step(`${CONTACTS} contacts`, sql`
    INSERT INTO contacts (company_id, phone, sha256_plus, sha256_bare, first_name, variables, tags, country)
    SELECT ${companyId}, p.phone, sha256(convert_to(p.phone, 'UTF8')), sha256(convert_to(substr(p.phone, 2), 'UTF8')), 'Name ' || i,
           jsonb_build_object('score', (i % 1000)::text, 'joined', '2026-01-' || lpad((1 + i % 28)::text, 2, '0'), 'city', 'Berlin'),
           CASE WHEN i % 7 = 0 THEN ARRAY['vip'] ELSE ARRAY[]::text[] END, 'DE'
    FROM generate_series(1, ${CONTACTS}::int) AS i, LATERAL (SELECT '+49151' || lpad(i::text, 8, '0') AS phone) p`);
  const perBatch = 100_000;
  for (let m = 0; m < MESSAGES; m++) {
    const batches = Math.ceil(CONTACTS / perBatch);
    await step(`messages round ${m + 1}: ${batches} batches`, sql`
      INSERT INTO batches (batch_id, company_id, kind, source_id, status, total, items, template, created_at, completed_at)
      SELECT md5('filter-bench' || ${m}::int || '-' || b)::uuid, ${companyId}, 'campaign', ${campaignId}, 'completed', ${perBatch}::int, '[]', '{"body":"Hi"}',
             now() - interval '60 days', now() - interval '60 days'
      FROM generate_series(0, ${batches - 1}::int) AS b`);
    await step(`messages round ${m + 1}: ${CONTACTS} messages`, sql`
      INSERT INTO messages (message_id, batch_id, company_id, seq, contact_id, phone, status, attempts, sent_at, delivered_at, read_at, rendered, updated_at)
      SELECT gen_random_uuid(), md5('filter-bench' || ${m}::int || '-' || ((k - 1) / ${perBatch}::int))::uuid, ${companyId}, (k - 1) % ${perBatch}::int, contact_id, phone,
             'sent', 1, now() - (${m}::int + 1) * interval '3 days', now() - (${m}::int + 1) * interval '3 days',
             CASE WHEN k % 2 = 0 THEN now() - (${m}::int + 1) * interval '3 days' END, '{"body":"Hi"}', now()
      FROM (SELECT contact_id, phone, row_number() OVER (ORDER BY contact_id) AS k FROM contacts WHERE company_id = ${companyId}) c`);
  }
  await step('static segment members', sql`
    INSERT INTO segment_members (segment_id, contact_id) SELECT ${segmentId}, contact_id FROM contacts WHERE company_id = ${companyId} AND contact_id % 10 = 0`);
  await step('vacuum analyze', sql`VACUUM ANALYZE`);
  await service.close();
  return { companyId, segmentId, campaignId };
}

/** The CPU time (ms) the process `pid` has used so far (Linux /proc). */
function cpuMs(pid: number): number {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
}

async function main(): Promise<void> {
  const machine = `${os.cpus()[0]?.model ?? '?'} × ${os.cpus().length}, load ${os.loadavg()[0].toFixed(1)}`;
  console.log(`# Filter previews at the limits, ${onPg ? 'PostgreSQL' : 'PGlite'}, ${CONTACTS} contacts, ${MESSAGES} messages each, ${new Date().toISOString()}, ${machine}`);
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cms-bench-filters-'));
  const env: Record<string, string> = { DATA_DIR: dataDir, ADMIN_TOKEN: ADMIN, SECRETS_KEY: SECRETS, LOG_LEVEL: 'warn' };
  if (onPg) env.DATABASE_URL = await freshDatabase(args.db!, DB_NAME);
  const ids = await setup(env);
  const port = await freePort();
  const child = await startServeProcess(env, port);
  const admin = operatorApi(`http://127.0.0.1:${port}`, ADMIN);
  const rows: string[] = [];
  try {
    const filters: Record<string, unknown> = { baseline: BASELINE, ...widestFilters({ segmentId: ids.segmentId, campaignId: ids.campaignId }) };
    let baselineP50 = 0;
    for (const [name, filter] of Object.entries(filters)) {
      const times: number[] = [];
      let count = 0;
      await admin('POST', `/admin/companies/${ids.companyId}/segments/preview`, { filter });
      const cpu0 = cpuMs(child.pid!);
      for (let i = 0; i < Number(args.requests); i++) {
        const t = performance.now();
        count = (await admin('POST', `/admin/companies/${ids.companyId}/segments/preview`, { filter })).count;
        times.push(performance.now() - t);
      }
      const cpu = (cpuMs(child.pid!) - cpu0) / times.length;
      times.sort((a, b) => a - b);
      const p50 = percentile(times, 50);
      if (name === 'baseline') baselineP50 = p50;
      const node = parseFilter(filter);
      const conditions = JSON.stringify(filter).match(/"(attribute|field|tag|segment|message|replied_within)"/g)?.length ?? 0;
      rows.push(`| ${name} | ${conditions} | ${filterCost(node)} | ${count} | ${p50.toFixed(0)} | ${times.at(-1)!.toFixed(0)} | ${cpu.toFixed(0)} | ${(p50 / baselineP50).toFixed(1)} |`);
      console.error(rows.at(-1));
    }
    console.log(`\n| filter | conditions | cost | count | p50 ms | max ms | service CPU ms a preview | p50 / baseline |\n|---|---|---|---|---|---|---|---|\n${rows.join('\n')}`);
  } finally {
    child.kill();
    await new Promise((r) => child.once('exit', r));
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
