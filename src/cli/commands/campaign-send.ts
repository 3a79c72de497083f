/**
 * `cms campaign send CAMPAIGN_ID (--segment ID | --contacts N,N,...) [--at RFC3339] [--dry-run]`:
 * POST /admin/campaigns/{id}/sends; prints the plan (sent / skipped opted out / invalid / held for
 * delivery hours) and, unless --dry-run, the new batch id.
 * `cms batch cancel BATCH_ID`: POST /admin/batches/{id}/cancel; unsent messages end skipped /
 * `cancelled`. `cms batch pause BATCH_ID` / `cms batch resume BATCH_ID`: POST
 * /admin/batches/{id}/pause|resume; prints the batch's status and funnel (src/domain/batch-control.ts,
 * docs/decisions.md "Cancel, pause and resume"). A completed or cancelled batch: the 409 as an error.
 * Registered on the existing `campaign` and `batch` groups (call after registerCampaign / registerBatch).
 */
import { Option, type Command } from 'commander';
import { data, integerId } from '../client.ts';
import { addCommonOptions, contextFor } from '../context.ts';
import { printJson, printLine, printRecord } from '../output.ts';
import { funnelLine } from './batch.ts';
import { parseNonEmpty, parsePositiveInt } from '../parse.ts';
import type { CliIo } from '../io.ts';

const group = (program: Command, name: string): Command => {
  const g = program.commands.find((c) => c.name() === name);
  if (!g) throw new Error(`cms: command group ${name} is not registered`);
  return g;
};

/** Registers `campaign send`, `batch cancel`, `batch pause` and `batch resume` (see the module comment). */
export function registerCampaignSend(program: Command, io: CliIo): void {
  addCommonOptions(
    group(program, 'campaign')
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

  addCommonOptions(
    group(program, 'batch')
      .command('cancel')
      .description('cancel what a send has not handed to a provider yet (ends skipped, reason cancelled)')
      .argument('<batch_id>', 'batch id', parseNonEmpty),
  ).action(async (batchId: string, _opts: unknown, cmd: Command) => {
    const ctx = await contextFor(cmd, io);
    const res = await data(ctx.api.POST('/admin/batches/{batch_id}/cancel', { params: { path: { batch_id: batchId } } }));
    if (ctx.json) printJson(io, res);
    else printRecord(io, res, 'Cancelled:');
  });

  for (const action of ['pause', 'resume'] as const) {
    addCommonOptions(
      group(program, 'batch')
        .command(action)
        .description(action === 'pause'
          ? 'pause a send: nothing more is handed to a provider until resume'
          : 'resume a paused send: its pending messages are delivered again')
        .argument('<batch_id>', 'batch id', parseNonEmpty),
    ).action(async (batchId: string, _opts: unknown, cmd: Command) => {
      const ctx = await contextFor(cmd, io);
      const params = { params: { path: { batch_id: batchId } } };
      const batch = await data(action === 'pause'
        ? ctx.api.POST('/admin/batches/{batch_id}/pause', params)
        : ctx.api.POST('/admin/batches/{batch_id}/resume', params));
      if (ctx.json) return printJson(io, batch);
      printRecord(io, { batch_id: batch.batch_id, status: batch.status }, action === 'pause' ? 'Paused:' : 'Resumed:');
      printLine(io, funnelLine(batch.counts));
    });
  }
}
