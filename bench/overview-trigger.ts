/**
 * Cost of migration 015's update trigger (the Overview's `message_counts`) per statement, on the data
 * of bench/console.ts (run that first): the same UPDATE of one campaign batch's 500 messages with the
 * trigger on and off (`ALTER TABLE … DISABLE TRIGGER` inside the transaction), rolled back, interleaved,
 * 40 batches each; medians. "result" changes statuses as delivery results and receipts do; "claim"
 * changes only the lease, as claims and renewals do (the trigger finds nothing to count).
 *
 *   node bench/overview-trigger.ts [--db postgres://postgres@127.0.0.1:5432/cms_bench_console]
 */
import { parseArgs } from 'node:util';
import pg from 'pg';

const { values } = parseArgs({ options: { db: { type: 'string', default: 'postgres://postgres@127.0.0.1:5432/cms_bench_console' } } });
const c = new pg.Client({ connectionString: values.db });
await c.connect();
const batches = (await c.query(`SELECT batch_id FROM batches WHERE company_id = 1 AND kind = 'campaign' ORDER BY created_at DESC LIMIT 40`)).rows.map((r) => r.batch_id);
const stmts: Record<string, string> = {
  result: `UPDATE messages SET status = CASE WHEN status = 'pending' THEN 'sent' WHEN status = 'sent' THEN 'delivered' ELSE status END, updated_at = now() WHERE batch_id = $1`,
  claim: `UPDATE messages SET lease_until = now() + interval '15 seconds' WHERE batch_id = $1`,
};
const median = (a: number[]) => a.sort((x, y) => x - y)[Math.floor(a.length / 2)];
for (const [name, text] of Object.entries(stmts)) {
  const on: number[] = []; const off: number[] = [];
  for (let i = 0; i < 40; i++) {
    for (const enabled of i % 2 ? [true, false] : [false, true]) {
      await c.query('BEGIN');
      if (!enabled) await c.query('ALTER TABLE messages DISABLE TRIGGER messages_counts_update');
      const t = performance.now();
      await c.query(text, [batches[i]]);
      (enabled ? on : off).push(performance.now() - t);
      await c.query('ROLLBACK');
    }
  }
  console.log(`${name} (500 rows): trigger on ${median(on).toFixed(2)} ms, off ${median(off).toFixed(2)} ms (medians of 40)`);
}
await c.end();
