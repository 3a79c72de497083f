/**
 * Costs of frequency caps and the consent ledger (docs/audience.md "Measurements"), on PostgreSQL
 * (a fresh database `cms_bench_caps` next to the one in the URL) or PGlite in memory:
 *
 * 1. The fan-out's contact write (`upsertContacts`) with the ledger's suppression lookup against the
 *    statement without it (as before migration 029), both run in the same database and rolled back,
 *    interleaved: 50 new contacts (an automation trigger's fan-out) and 1,000 existing ones (a
 *    campaign's), in a company whose ledger holds LEDGER entries, ERASED of them of erased contacts,
 *    and in a company without erasures.
 * 2. The cap check `cappedRecipients` on 1,000 / 10,000 / 100,000 recipients, each with 3 campaign and
 *    5 automation messages (sent) in the window.
 * 3. The plan's opted-out count (`selectOptedOutNumbers`, the ledger included) on 100,000 numbers
 *    against the count it replaced.
 * Medians of RUNS runs.
 *
 *   node bench/audience-caps.ts [--db postgres://postgres@127.0.0.1:5432/postgres | --db pglite] [--runs 15]
 * (the PostgreSQL default; PGlite works too but fills its 800,000 messages slowly).
 */
import { parseArgs } from 'node:util';
import { sql } from 'kysely';
import pg from 'pg';
import { openPglite, openPostgres, type Database } from '../src/db/database.ts';
import { migrate } from '../src/db/migrate.ts';
import { selectOptedOutNumbers } from '../src/db/consent.ts';
import { upsertContacts } from '../src/domain/contacts.ts';
import { cappedRecipients } from '../src/domain/frequency-caps.ts';
import { countryOf, phoneDigests } from '../src/domain/phone.ts';

const { values } = parseArgs({ options: { db: { type: 'string', default: 'postgres://postgres@127.0.0.1:5432/postgres' }, runs: { type: 'string', default: '15' } } });
const RUNS = Number(values.runs);
const CONTACTS = 120_000;
const LEDGER = 20_000;
const ERASED = 2_000;

async function open(): Promise<Database> {
  if (values.db === 'pglite') return openPglite('memory://bench-caps');
  const admin = new pg.Client({ connectionString: values.db });
  await admin.connect();
  await admin.query('DROP DATABASE IF EXISTS cms_bench_caps WITH (FORCE)');
  await admin.query('CREATE DATABASE cms_bench_caps');
  await admin.end();
  const u = new URL(values.db!);
  u.pathname = '/cms_bench_caps';
  return openPostgres(u.toString(), 4);
}

const median = (a: number[]) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)];
const phoneOf = (i: number) => `+49151${String(10_000_000 + i)}`;

/** The contact write as it was before migration 029 (no ledger lookup, no evidence), for comparison. */
async function upsertWithoutLedger(db: Database['db'], companyId: number, phones: string[]): Promise<void> {
  const plus = phones.map((p) => phoneDigests(p).plus.toString('hex'));
  const bare = phones.map((p) => phoneDigests(p).bare.toString('hex'));
  const nulls = phones.map(() => null);
  await sql`
    INSERT INTO contacts AS c (company_id, phone, sha256_plus, sha256_bare, first_name, last_name, variables, opted_out, opt_out_source, opt_out_at, country)
    SELECT ${companyId}, t.phone, decode(t.plus, 'hex'), decode(t.bare, 'hex'), t.first_name, t.last_name, t.variables, coalesce(t.opted_out, false),
      CASE WHEN t.opted_out THEN 'operator' END, CASE WHEN t.opted_out THEN now() END, t.country
    FROM unnest(${phones}::text[], ${plus}::text[], ${bare}::text[], ${nulls}::text[], ${nulls}::text[], ${phones.map(() => '{}')}::jsonb[], ${nulls}::bool[], ${phones.map(countryOf)}::text[])
      AS t(phone, plus, bare, first_name, last_name, variables, opted_out, country)
    ON CONFLICT (company_id, phone) DO UPDATE SET
      first_name = coalesce(EXCLUDED.first_name, c.first_name), last_name = coalesce(EXCLUDED.last_name, c.last_name),
      variables = c.variables || EXCLUDED.variables, country = coalesce(c.country, EXCLUDED.country), updated_at = now()
    RETURNING contact_id`.execute(db);
}

/** Runs `fn` in a transaction that is rolled back; its time in ms. */
async function timed(database: Database, fn: (trx: Database['db']) => Promise<unknown>): Promise<number> {
  let ms = 0;
  await database.db.transaction().execute(async (trx) => {
    const t = performance.now();
    await fn(trx);
    ms = performance.now() - t;
    throw new Rollback();
  }).catch((e) => { if (!(e instanceof Rollback)) throw e; });
  return ms;
}
class Rollback extends Error {}

const database = await open();
await migrate(database);
const db = database.db;
const company = (await sql<{ id: number }>`INSERT INTO companies (name, frequency_cap) VALUES ('bench', '{"messages": 3, "per": "7d"}') RETURNING company_id AS id`.execute(db)).rows[0].id;
const campaign = (await sql<{ id: number }>`INSERT INTO campaigns (company_id, name, template) VALUES (${company}, 'c', '{"body": "x"}') RETURNING campaign_id AS id`.execute(db)).rows[0].id;
console.log(`setup: ${CONTACTS} contacts, ${LEDGER} ledger entries (${ERASED} erased), 8 messages per recipient of the cap runs …`);
await sql`
  INSERT INTO contacts (company_id, phone, sha256_plus, sha256_bare, country)
  SELECT ${company}, '+49151' || (10000000 + i)::text, sha256(convert_to('+49151' || (10000000 + i)::text, 'UTF8')), sha256(convert_to('49151' || (10000000 + i)::text, 'UTF8')), 'DE'
  FROM generate_series(0, ${CONTACTS - 1}) AS i`.execute(db);
await sql`
  INSERT INTO consent_ledger (company_id, phone_sha256, at, opted_out, source, erased)
  SELECT ${company}, sha256(convert_to('+49152' || (10000000 + i)::text, 'UTF8')), now(), i % 3 = 0, 'keyword', i < ${ERASED}
  FROM generate_series(0, ${LEDGER - 1}) AS i`.execute(db);
// Messages: the first 100,000 contacts get 3 campaign and 5 automation messages, sent an hour ago.
for (const [kind, n] of [['campaign', 3], ['automation', 5]] as const) {
  for (let b = 0; b < n; b++) {
    const batch = crypto.randomUUID();
    await sql`INSERT INTO batches (batch_id, company_id, kind, source_id, status, total, items, template) VALUES (${batch}::uuid, ${company}, ${kind}, 1, 'completed', 100000, '[]', '{}')`.execute(db);
    await sql`
      INSERT INTO messages (message_id, batch_id, company_id, seq, phone, status, sent_at)
      SELECT gen_random_uuid(), ${batch}::uuid, ${company}, i, '+49151' || (10000000 + i)::text, 'sent', now() - interval '1 hour'
      FROM generate_series(0, 99999) AS i`.execute(db);
  }
}
await sql`ANALYZE`.execute(db);

// 1. The contact write, in the company with erasures and in one without (the same 1,000 existing contacts).
const plainCompany = (await sql<{ id: number }>`INSERT INTO companies (name) VALUES ('no erasures') RETURNING company_id AS id`.execute(db)).rows[0].id;
const existing = Array.from({ length: 1000 }, (_, i) => phoneOf(i * 97));
await upsertContacts(db, plainCompany, existing.map((phone) => ({ phone })));
const fresh = (run: number, n: number) => Array.from({ length: n }, (_, i) => `+49153${String(10_000_000 + run * 1000 + i)}`);
for (const [who, id] of [['with erasures', company], ['without erasures', plainCompany]] as const) {
  for (const [label, phonesOf] of [['50 new contacts', (run: number) => fresh(run, 50)], ['1,000 existing contacts', () => existing]] as const) {
    const withLedger: number[] = []; const without: number[] = [];
    for (let run = 0; run < RUNS; run++) {
      const phones = phonesOf(run);
      for (const mine of run % 2 ? [true, false] : [false, true]) {
        const ms = await timed(database, (trx) => (mine ? upsertContacts(trx, id, phones.map((phone) => ({ phone }))) : upsertWithoutLedger(trx, id, phones)));
        (mine ? withLedger : without).push(ms);
      }
    }
    console.log(`contact write, ${label}, company ${who}: ${median(withLedger).toFixed(2)} ms with the ledger lookup, ${median(without).toFixed(2)} ms without`);
  }
}

// 2. The cap check.
for (const n of [1_000, 10_000, 100_000]) {
  const recipients = Array.from({ length: n }, (_, i) => phoneOf(i));
  const times: number[] = [];
  let capped = 0;
  for (let run = 0; run < Math.min(RUNS, n >= 100_000 ? 5 : RUNS); run++) {
    const t = performance.now();
    capped = (await cappedRecipients(db, { companyId: company, kind: 'campaign', campaignId: campaign }, recipients, Date.now())).size;
    times.push(performance.now() - t);
  }
  console.log(`cap check, ${n.toLocaleString('en')} recipients (${capped.toLocaleString('en')} capped): ${median(times).toFixed(1)} ms`);
}

// 3. The plan's opted-out count.
{
  const numbers = Array.from({ length: 100_000 }, (_, i) => (i % 10 === 0 ? `+49152${String(10_000_000 + i)}` : phoneOf(i)));
  const mine: number[] = []; const before: number[] = [];
  for (let run = 0; run < 5; run++) {
    let t = performance.now();
    await selectOptedOutNumbers(db, company, numbers);
    mine.push(performance.now() - t);
    t = performance.now();
    await sql`SELECT count(*)::int AS n FROM contacts WHERE company_id = ${company} AND opted_out AND phone = ANY(${numbers}::text[])`.execute(db);
    before.push(performance.now() - t);
  }
  console.log(`plan, opted out among 100,000 numbers: ${median(mine).toFixed(1)} ms (ledger included), ${median(before).toFixed(1)} ms (contacts only, as before)`);
}
await database.close();
