/**
 * `cms connector connect|disconnect`: PUT /admin/companies/{company_id}/connector with
 * `{connected, provider?}` (docs/operator-api.md). Campaign sends need a connected connector.
 */
import type { Command } from 'commander';
import type { ConnectorSettings } from '../api/types.ts';
import { data, integerId } from '../client.ts';
import { addCommonOptions, contextFor } from '../context.ts';
import { printJson, printLine, printRecord } from '../output.ts';
import { parseNonEmpty } from '../parse.ts';
import type { CliIo } from '../io.ts';

/** PUT the connector settings and print the answer (or a summary when the answer is empty). */
async function putConnector(io: CliIo, cmd: Command, company: string, body: ConnectorSettings): Promise<void> {
  const companyId = integerId(company, 'company id');
  const ctx = await contextFor(cmd, io);
  const res = await data(ctx.api.PUT('/admin/companies/{company_id}/connector', { params: { path: { company_id: companyId } }, body }));
  const shown = res && typeof res === 'object' ? res : { company_id: company, ...body };
  if (ctx.json) printJson(io, shown);
  else if (res && typeof res === 'object') printRecord(io, res, body.connected ? 'Connector connected:' : 'Connector disconnected:');
  else printLine(io, `Connector ${body.connected ? 'connected' : 'disconnected'} for company ${company}.`);
}

/** Register `connector connect --company ID [--provider NAME]` and `connector disconnect --company ID`. */
export function registerConnector(program: Command, io: CliIo): void {
  const group = program.command('connector').description('connect the push-messaging connector of a company');

  addCommonOptions(
    group
      .command('connect')
      .description('mark the connector connected (campaign sends are refused otherwise)')
      .requiredOption('--company <id>', 'company id', parseNonEmpty)
      .option('--provider <name>', 'connector provider name', parseNonEmpty),
  ).action(async (opts: { company: string; provider?: string }, cmd: Command) => {
    const body: ConnectorSettings = { connected: true };
    if (opts.provider !== undefined) body.provider = opts.provider;
    await putConnector(io, cmd, opts.company, body);
  });

  addCommonOptions(
    group
      .command('disconnect')
      .description('mark the connector disconnected')
      .requiredOption('--company <id>', 'company id', parseNonEmpty),
  ).action(async (opts: { company: string }, cmd: Command) => {
    await putConnector(io, cmd, opts.company, { connected: false });
  });
}
