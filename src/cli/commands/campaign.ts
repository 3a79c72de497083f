/**
 * `cms campaign create|list|show`: POST /admin/companies/{company_id}/campaigns,
 * GET /admin/companies/{company_id}/campaigns (newest first) and GET /admin/campaigns/{campaign_id}
 * (docs/operator-api.md). Template from `--template FILE` or `--body TEXT`
 * (see ../templates.ts); `show` prints it in that file's form.
 *
 * `cms campaign send CAMPAIGN_ID (--segment ID | --contacts N,N,...) [--at RFC3339] [--dry-run]`:
 * POST /admin/campaigns/{id}/sends; prints the plan (sent / skipped opted out / invalid / held for
 * delivery hours) and, unless --dry-run, the new batch id. A send is cancelled with `cms batch cancel`.
 */
import { Option, type Command } from 'commander';
import type { Template } from '../api/types.ts';
import { data, integerId } from '../client.ts';
import { addCommonOptions, contextFor } from '../context.ts';
import { oneLine, printJson, printRecord, printSource, printTable } from '../output.ts';
import { parseNonEmpty, parsePositiveInt } from '../parse.ts';
import { takeWarnings, templateFromOptions } from '../templates.ts';
import type { CliIo } from '../io.ts';
import { EXPIRE_AFTER_HELP, expireAfterValue } from './automation.ts';

/** Register `campaign create --company ID --name N (--template FILE | --body TEXT)`, `campaign list`, `campaign show` and `campaign send`. */
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

  addCommonOptions(
    group
      .command('send')
      .description('send a campaign to a segment or to numbers, now or at --at; --dry-run shows the plan only')
      .argument('<campaign_id>', 'campaign id', parseNonEmpty)
      .addOption(new Option('--segment <id>', 'segment id').argParser(parsePositiveInt).conflicts('contacts'))
      .option('--contacts <numbers>', 'comma-separated phone numbers')
      .option('--at <time>', 'send at this instant (RFC 3339 with offset, e.g. 2026-06-01T14:30:00+02:00)')
      .option('--dry-run', 'only show how many will be sent, skipped and held'),
  ).action(async (campaignId: string, opts: { segment?: number; contacts?: string; at?: string; dryRun?: boolean }, cmd: Command) => {
    if ((opts.segment === undefined) === (opts.contacts === undefined)) cmd.error('error: give exactly one of --segment and --contacts', { exitCode: 2 });
    const id = integerId(campaignId, 'campaign id');
    const ctx = await contextFor(cmd, io);
    const body = {
      ...(opts.segment !== undefined ? { segment_id: opts.segment } : { contacts: opts.contacts!.split(',').map((x) => x.trim()).filter(Boolean) }),
      ...(opts.at ? { scheduled_for: opts.at } : {}),
      ...(opts.dryRun ? { dry_run: true } : {}),
    };
    const res = await data(ctx.api.POST('/admin/campaigns/{campaign_id}/sends', { params: { path: { campaign_id: id } }, body }));
    const batchId = 'batch_id' in res ? res.batch_id : undefined; // 202 accepted; 200 is a dry run's plan
    if (ctx.json) printJson(io, res);
    else printRecord(io, { ...(batchId ? { batch_id: batchId } : {}), ...res.plan }, batchId ? 'Campaign send accepted:' : 'Plan (nothing sent):');
  });
}
