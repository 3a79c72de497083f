/**
 * `cms campaign create`: POST /admin/companies/{company_id}/campaigns (operator-api.md).
 * Template from `--template FILE` or `--body TEXT` (see ../templates.ts).
 */
import { Option, type Command } from 'commander';
import { addCommonOptions, contextFor } from '../context.ts';
import { printJson, printRecord } from '../output.ts';
import { parseNonEmpty } from '../parse.ts';
import { takeWarnings, templateFromOptions } from '../templates.ts';

/** Register `campaign create --company ID --name N (--template FILE | --body TEXT)` on `program`. */
export function registerCampaign(program: Command): void {
  const group = program.command('campaign').description('define campaigns (sent through the connector)');

  addCommonOptions(
    group
      .command('create')
      .description('create a campaign')
      .requiredOption('--company <id>', 'company id', parseNonEmpty)
      .requiredOption('--name <name>', 'campaign name', parseNonEmpty)
      .addOption(new Option('--template <file>', 'template JSON file ("-" for stdin)').conflicts('body'))
      .option('--body <text>', 'shortcut: plain-text template {header: none, body: TEXT, buttons: []}'),
  ).action(async (opts: { company: string; name: string; template?: string; body?: string }, cmd: Command) => {
    const template = await templateFromOptions(opts, true);
    const ctx = await contextFor(cmd);
    const campaign = await ctx.client.createCampaign(opts.company, { name: opts.name, template });
    if (ctx.json) printJson(campaign);
    else printRecord(takeWarnings(campaign), 'Campaign created:');
  });
}
