/**
 * `cms audit [--company ID] [--limit N]`: GET /admin/audit?company_id=&limit= →
 * `{entries: [{at, actor, action, target, details}]}`. Servers without the route get a clear
 * "does not provide" message (see errors.ts, `routeMissing`).
 */
import type { Command } from 'commander';
import { data, integerId } from '../client.ts';
import { addCommonOptions, contextFor } from '../context.ts';
import { printJson, printTable } from '../output.ts';
import { parseNonEmpty, parsePositiveInt } from '../parse.ts';
import type { CliIo } from '../io.ts';

/** Register `audit` on `program`. */
export function registerAudit(program: Command, io: CliIo): void {
  addCommonOptions(
    program
      .command('audit')
      .description('show the operator audit log (who changed what)')
      .option('--company <id>', 'only entries about this company', parseNonEmpty)
      .option('--limit <n>', 'at most this many entries', parsePositiveInt),
  ).action(async (opts: { company?: string; limit?: number }, cmd: Command) => {
    const companyId = opts.company === undefined ? undefined : integerId(opts.company, 'company id');
    const ctx = await contextFor(cmd, io);
    const { entries } = await data(ctx.api.GET('/admin/audit', { params: { query: { company_id: companyId, limit: opts.limit } } }));
    if (ctx.json) {
      printJson(io, { entries });
      return;
    }
    printTable(io,
      entries,
      [{ key: 'at' }, { key: 'actor' }, { key: 'action' }, { key: 'target' }, { key: 'details' }],
      '(no audit entries)',
    );
  });
}
