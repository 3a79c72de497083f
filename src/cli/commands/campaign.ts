/**
 * `cms campaign create`: POST /admin/companies/{company_id}/campaigns (operator-api.md).
 * Template from `--template FILE` or `--body TEXT` (see ../templates.ts).
 */
import { Option, type Command } from 'commander';
import type { Template } from '../api/types.ts';
import { data, integerId } from '../client.ts';
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
    // The template file's content is sent as it is: the server checks it (422 naming the field).
    const template = (await templateFromOptions(opts, true)) as Template;
    const companyId = integerId(opts.company, 'company id');
    const ctx = await contextFor(cmd);
    const campaign = await data(ctx.api.POST('/admin/companies/{company_id}/campaigns', {
      params: { path: { company_id: companyId } },
      body: { name: opts.name, template },
    }));
    if (ctx.json) printJson(campaign);
    else printRecord(takeWarnings(campaign), 'Campaign created:');
  });
}
