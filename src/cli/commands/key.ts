/**
 * `cms key create|revoke|list`: POST /admin/companies/{company_id}/api-keys, DELETE /admin/api-keys/{key_id}
 * and GET /admin/companies/{company_id}/api-keys (docs/operator-api.md). The api_key is
 * shown only once; the list shows each key's prefix, never the key.
 */
import type { Command } from 'commander';
import { data, integerId } from '../client.ts';
import { addCommonOptions, contextFor } from '../context.ts';
import { printJson, printLine, printRecord, printTable } from '../output.ts';
import { parseNonEmpty } from '../parse.ts';
import type { CliIo } from '../io.ts';

/** Register `key create --company ID [--label L]`, `key revoke KEY_ID` and `key list --company ID` on `program`. */
export function registerKey(program: Command, io: CliIo): void {
  const group = program.command('key').description('issue and revoke company API keys (service-api-key)');

  addCommonOptions(
    group
      .command('create')
      .description('issue an API key for a company; the key is printed only this once')
      .requiredOption('--company <id>', 'company id', parseNonEmpty)
      .option('--label <label>', 'free-text label, e.g. "shop integration"'),
  ).action(async (opts: { company: string; label?: string }, cmd: Command) => {
    const companyId = integerId(opts.company, 'company id');
    const ctx = await contextFor(cmd, io);
    const key = await data(ctx.api.POST('/admin/companies/{company_id}/api-keys', {
      params: { path: { company_id: companyId } },
      body: opts.label === undefined ? {} : { label: opts.label },
    }));
    if (ctx.json) {
      printJson(io, key);
      return;
    }
    const { api_key: apiKey, ...rest } = key;
    printRecord(io, { company_id: opts.company, ...rest }, 'API key created:');
    printLine(io);
    printLine(io, `  ${apiKey}`);
    printLine(io);
    printLine(io, 'Store this key now: it is shown only once and cannot be retrieved later.');
  });

  addCommonOptions(
    group
      .command('revoke')
      .description('revoke an API key; requests with it are refused from then on')
      .argument('<key-id>', 'key id (from `cms key create`)', parseNonEmpty),
  ).action(async (keyId: string, _opts: unknown, cmd: Command) => {
    const id = integerId(keyId, 'key id');
    const ctx = await contextFor(cmd, io);
    await data(ctx.api.DELETE('/admin/api-keys/{key_id}', { params: { path: { key_id: id } } }));
    if (ctx.json) printJson(io, { key_id: keyId, revoked: true });
    else printLine(io, `API key ${keyId} revoked.`);
  });

  addCommonOptions(
    group
      .command('list')
      .description("list a company's API keys (prefix, label, last use; never the keys themselves)")
      .requiredOption('--company <id>', 'company id', parseNonEmpty),
  ).action(async (opts: { company: string }, cmd: Command) => {
    const companyId = integerId(opts.company, 'company id');
    const ctx = await contextFor(cmd, io);
    const { keys } = await data(ctx.api.GET('/admin/companies/{company_id}/api-keys', { params: { path: { company_id: companyId } } }));
    if (ctx.json) return printJson(io, { keys });
    printTable(io, keys, [
      { key: 'key_id', header: 'id' }, { key: 'prefix' }, { key: 'label' }, { key: 'created_at' },
      { key: 'last_used_at', header: 'last used' }, { key: 'revoked_at', header: 'revoked' },
    ], '(no API keys)');
  });
}
