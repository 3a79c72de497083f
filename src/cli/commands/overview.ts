/**
 * `cms overview --company ID`: GET /admin/companies/{company_id}/overview, the
 * numbers of the console's Overview page: messages per local day by status over the last 30 days
 * (the company's delivery-hours time zone, UTC without), totals, the top failure reasons in plain
 * words, and the opt-out rate. `--json` prints the answer as is.
 */
import type { Command } from 'commander';
import { data, integerId } from '../client.ts';
import { addCommonOptions, contextFor } from '../context.ts';
import { printJson, printLine, printTable } from '../output.ts';
import { parseNonEmpty } from '../parse.ts';
import type { CliIo } from '../io.ts';

const STATUSES = ['read', 'delivered', 'sent', 'pending', 'skipped', 'failed'] as const;

/** `0.0303` → `3.0%`. */
function percent(rate: number): string {
  return `${(rate * 100).toFixed(1)}%`;
}

/** Register `overview --company ID` on `program`. */
export function registerOverview(program: Command, io: CliIo): void {
  addCommonOptions(
    program
      .command('overview')
      .description("a company's last 30 days: messages per day by status, top failure reasons, opt-out rate")
      .requiredOption('--company <id>', 'company id', parseNonEmpty),
  ).action(async (opts: { company: string }, cmd: Command) => {
    const companyId = integerId(opts.company, 'company id');
    const ctx = await contextFor(cmd, io);
    const o = await data(ctx.api.GET('/admin/companies/{company_id}/overview', { params: { path: { company_id: companyId } } }));
    if (ctx.json) {
      printJson(io, o);
      return;
    }
    printLine(io, `Company ${companyId}: ${o.from} to ${o.to} (days in ${o.timezone})`);
    const t = o.totals;
    printLine(io, `messages ${t.total}: ${STATUSES.map((s) => `${s} ${t[s]}`).join(' · ')}`);
    printLine(io, `opt-out rate: ${o.opt_out.opted_out} of ${o.opt_out.contacts} contacts (${percent(o.opt_out.rate)}); ${o.opt_out.opted_out_in_period} opted out in the period`);
    printLine(io);
    printLine(io, 'Messages per day:');
    printTable(io, o.days, [{ key: 'date' }, ...STATUSES.map((key) => ({ key })), { key: 'total' }]);
    printLine(io);
    printLine(io, 'Top failure reasons:');
    printTable(io, o.failure_reasons, [{ key: 'status' }, { key: 'code' }, { key: 'count' }, { key: 'label', header: 'reason' }], '(no message failed or was skipped)');
  });
}
