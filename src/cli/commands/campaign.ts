/**
 * `cms campaign create|list|show`: POST /admin/companies/{company_id}/campaigns,
 * GET /admin/companies/{company_id}/campaigns (newest first) and GET /admin/campaigns/{campaign_id}
 * (docs/operator-api.md). Template from `--template FILE` or `--body TEXT`
 * (see ../templates.ts); `show` prints it in that file's form. `campaign send` is in campaign-send.ts.
 */
import { Option, type Command } from 'commander';
import type { Template } from '../api/types.ts';
import { data, integerId } from '../client.ts';
import { addCommonOptions, contextFor } from '../context.ts';
import { oneLine, printJson, printRecord, printSource, printTable } from '../output.ts';
import { parseNonEmpty } from '../parse.ts';
import { takeWarnings, templateFromOptions } from '../templates.ts';
import type { CliIo } from '../io.ts';
import { EXPIRE_AFTER_HELP, expireAfterValue } from './automation.ts';

/** Register `campaign create --company ID --name N (--template FILE | --body TEXT)`, `campaign list` and `campaign show`. */
export function registerCampaign(program: Command, io: CliIo): void {
  const group = program.command('campaign').description('define campaigns (sent through the connector)');

  addCommonOptions(
    group
      .command('create')
      .description('create a campaign')
      .requiredOption('--company <id>', 'company id', parseNonEmpty)
      .requiredOption('--name <name>', 'campaign name', parseNonEmpty)
      .addOption(new Option('--template <file>', 'template JSON file ("-" for stdin)').conflicts('body'))
      .option('--body <text>', 'shortcut: plain-text template {header: none, body: TEXT, buttons: []}')
      .option('--expire-after <duration>', `${EXPIRE_AFTER_HELP} (default 24h)`, parseNonEmpty)
      .option('--ignore-frequency-cap', "do not hold this campaign's messages to the company's frequency cap"),
  ).action(async (opts: { company: string; name: string; template?: string; body?: string; expireAfter?: string; ignoreFrequencyCap?: boolean }, cmd: Command) => {
    // The template file's content is sent as it is: the server checks it (422 naming the field).
    const template = (await templateFromOptions(io, opts, true)) as Template;
    const companyId = integerId(opts.company, 'company id');
    const ctx = await contextFor(cmd, io);
    const campaign = await data(ctx.api.POST('/admin/companies/{company_id}/campaigns', {
      params: { path: { company_id: companyId } },
      body: {
        name: opts.name, template, ...(opts.expireAfter !== undefined ? { expire_after: expireAfterValue(opts.expireAfter) } : {}),
        ...(opts.ignoreFrequencyCap ? { ignore_frequency_cap: true } : {}),
      },
    }));
    if (ctx.json) printJson(io, campaign);
    else printRecord(io, takeWarnings(io, campaign), 'Campaign created:');
  });

  addCommonOptions(
    group
      .command('list')
      .description("list a company's campaigns, newest first")
      .requiredOption('--company <id>', 'company id', parseNonEmpty),
  ).action(async (opts: { company: string }, cmd: Command) => {
    const companyId = integerId(opts.company, 'company id');
    const ctx = await contextFor(cmd, io);
    const campaigns = await data(ctx.api.GET('/admin/companies/{company_id}/campaigns', { params: { path: { company_id: companyId } } }));
    if (ctx.json) return printJson(io, campaigns);
    printTable(io, campaigns, [
      { key: 'id' }, { key: 'name' }, { key: 'template', header: 'body', format: (_v, c) => oneLine(c.template.body) }, { key: 'created_at' },
    ], '(no campaigns)');
  });

  addCommonOptions(
    group.command('show').description('show a campaign with its template').argument('<campaign-id>', 'campaign id', parseNonEmpty),
  ).action(async (id: string, _opts: unknown, cmd: Command) => {
    const campaignId = integerId(id, 'campaign id');
    const ctx = await contextFor(cmd, io);
    const campaign = await data(ctx.api.GET('/admin/campaigns/{campaign_id}', { params: { path: { campaign_id: campaignId } } }));
    if (ctx.json) printJson(io, campaign);
    else printSource(io, campaign, `Campaign ${campaign.id}:`);
  });
}
