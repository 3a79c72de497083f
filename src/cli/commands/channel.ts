/**
 * `cms channel set`: PUT /admin/companies/{company_id}/channel (docs/operator-api.md, "Providers").
 * outbox: `{provider}`; webhook: `{provider, url, secret?}` (without a secret the server generates a
 * `whsec_` one and returns it once: printed here); whatsapp:
 * `{provider, phone_number_id, access_token, api_base_url?, app_secret?, verify_token?, waba_id?,
 * throughput_per_second?, messaging_limit?}` (app secret and verify token for webhooks in; the WABA id
 * for the template catalogue; docs/whatsapp.md). Secrets are never echoed back.
 * `cms channel resume --company ID`: POST /admin/companies/{company_id}/channel/resume (a paused
 * WhatsApp channel becomes active).
 * Here `--url` is the webhook URL; give the server address before the command
 * (`cms --url BASE channel set ...`) or in CMS_URL.
 */
import { Option, type Command } from 'commander';
import type { ChannelSettings } from '../api/types.ts';
import { data, integerId } from '../client.ts';
import { addCommonOptions, contextFor } from '../context.ts';
import { UsageError } from '../errors.ts';
import { printJson, printLine, printRecord } from '../output.ts';
import { parseNonEmpty } from '../parse.ts';
import type { CliIo } from '../io.ts';

interface ChannelOptions {
  company: string;
  provider: 'outbox' | 'webhook' | 'whatsapp';
  url?: string;
  secret?: string;
  phoneNumberId?: string;
  accessToken?: string;
  apiBaseUrl?: string;
  appSecret?: string;
  verifyToken?: string;
  wabaId?: string;
  throughput?: string;
  messagingLimit?: string;
}

const flagsFor: Record<ChannelOptions['provider'], (keyof ChannelOptions)[]> = {
  outbox: [],
  webhook: ['url', 'secret'],
  whatsapp: ['phoneNumberId', 'accessToken', 'apiBaseUrl', 'appSecret', 'verifyToken', 'wabaId', 'throughput', 'messagingLimit'],
};

const flagName: Partial<Record<keyof ChannelOptions, string>> = {
  url: '--url',
  secret: '--secret',
  phoneNumberId: '--phone-number-id',
  accessToken: '--access-token',
  apiBaseUrl: '--api-base-url',
  appSecret: '--app-secret',
  verifyToken: '--verify-token',
  wabaId: '--waba-id',
  throughput: '--throughput',
  messagingLimit: '--messaging-limit',
};

/** Validate the provider-specific options and build the request body. Throws `UsageError`. */
export function channelBody(o: ChannelOptions): ChannelSettings {
  const allowed = flagsFor[o.provider];
  const stray = (Object.keys(flagName) as (keyof ChannelOptions)[]).filter(
    (k) => o[k] !== undefined && !allowed.includes(k),
  );
  if (stray.length > 0) {
    throw new UsageError(`${stray.map((k) => flagName[k]).join(', ')}: not used with --provider ${o.provider}`);
  }
  const need = (k: keyof ChannelOptions): string => {
    const v = o[k];
    if (v === undefined) throw new UsageError(`--provider ${o.provider} needs ${flagName[k]}`);
    return v;
  };
  switch (o.provider) {
    case 'outbox':
      return { provider: 'outbox' };
    case 'webhook': {
      const url = need('url');
      if (!/^https?:\/\/\S+$/.test(url)) throw new UsageError(`--url must be an http(s) URL, got ${url}`);
      // Without --secret the server generates one (whsec_...) and answers it once.
      return o.secret === undefined ? { provider: 'webhook', url } : { provider: 'webhook', url, secret: o.secret };
    }
    case 'whatsapp': {
      const body: ChannelSettings = {
        provider: 'whatsapp',
        phone_number_id: need('phoneNumberId'),
        access_token: need('accessToken'),
      };
      if (o.apiBaseUrl !== undefined) body.api_base_url = o.apiBaseUrl;
      if (o.appSecret !== undefined) body.app_secret = o.appSecret;
      if (o.verifyToken !== undefined) body.verify_token = o.verifyToken;
      if (o.wabaId !== undefined) {
        if (!/^[0-9]{1,32}$/.test(o.wabaId)) throw new UsageError(`--waba-id must be digits, got ${o.wabaId}`);
        body.waba_id = o.wabaId;
      }
      if (o.throughput !== undefined) {
        const n = Number(o.throughput);
        if (!/^[0-9]+$/.test(o.throughput) || n < 1 || n > 1000) throw new UsageError(`--throughput must be a whole number from 1 to 1000 (messages per second), got ${o.throughput}`);
        body.throughput_per_second = n;
      }
      if (o.messagingLimit !== undefined) {
        const v = o.messagingLimit;
        if (v === 'unlimited') body.messaging_limit = null;
        else if (['250', '2000', '10000', '100000'].includes(v)) body.messaging_limit = Number(v) as 250 | 2000 | 10000 | 100000;
        else throw new UsageError(`--messaging-limit must be 250, 2000, 10000, 100000 or unlimited, got ${v}`);
      }
      return body;
    }
  }
}

/** Register `channel set --company ID --provider outbox|webhook|whatsapp [...]` on `program`. */
export function registerChannel(program: Command, io: CliIo): void {
  const group = program.command('channel').description('choose how a company\'s messages are delivered');

  addCommonOptions(
    group
      .command('set')
      .description(
        'set the delivery provider of a company. The server address cannot be given as --url here ' +
          '(that is the webhook URL): use `cms --url BASE channel set ...` or CMS_URL',
      )
      .requiredOption('--company <id>', 'company id', parseNonEmpty)
      .addOption(
        new Option('--provider <name>', 'delivery provider').choices(['outbox', 'webhook', 'whatsapp']).makeOptionMandatory(),
      )
      .option('--url <url>', 'webhook: URL that receives signed POSTs of each message', parseNonEmpty)
      .option('--secret <secret>', 'webhook: signing secret (Standard Webhooks, HMAC-SHA256): whsec_<base64>, or any text used as its bytes; omitted: one is generated and printed once', parseNonEmpty)
      .option('--phone-number-id <id>', 'whatsapp: Cloud API phone number id', parseNonEmpty)
      .option('--access-token <token>', 'whatsapp: Cloud API access token', parseNonEmpty)
      .option('--api-base-url <url>', 'whatsapp: Cloud API base URL (server default if omitted)', parseNonEmpty)
      .option('--app-secret <secret>', "whatsapp: the Meta app's secret, verifies webhooks in (docs/whatsapp.md)", parseNonEmpty)
      .option('--verify-token <token>', 'whatsapp: the verify token you enter in the Meta app\'s webhook settings', parseNonEmpty)
      .option('--waba-id <id>', 'whatsapp: the WhatsApp Business Account id (its templates are synced from there)', parseNonEmpty)
      .option('--throughput <n>', "whatsapp: the number's messages per second, 1 to 1000 (server default 80)", parseNonEmpty)
      .option('--messaging-limit <n>', 'whatsapp: new people per 24 h: 250, 2000, 10000, 100000 or unlimited (server default 250)', parseNonEmpty),
    { serverUrl: false },
  ).action(async (opts: ChannelOptions, cmd: Command) => {
    const body = channelBody(opts);
    const companyId = integerId(opts.company, 'company id');
    const ctx = await contextFor(cmd, io);
    const res = await data(ctx.api.PUT('/admin/companies/{company_id}/channel', { params: { path: { company_id: companyId } }, body }));
    const shown = res && typeof res === 'object' ? res : { company_id: opts.company, provider: body.provider };
    if (ctx.json) printJson(io, shown);
    else if (res && typeof res === 'object') printRecord(io, res, 'Channel set:');
    else printLine(io, `Channel of company ${opts.company} set to ${body.provider}.`);
  });

  addCommonOptions(
    group
      .command('resume')
      .description('set a paused WhatsApp channel active again (its waiting messages are tried again)')
      .requiredOption('--company <id>', 'company id', parseNonEmpty),
  ).action(async (opts: { company: string }, cmd: Command) => {
    const companyId = integerId(opts.company, 'company id');
    const ctx = await contextFor(cmd, io);
    const res = await data(ctx.api.POST('/admin/companies/{company_id}/channel/resume', { params: { path: { company_id: companyId } } }));
    if (ctx.json) printJson(io, res);
    else printRecord(io, res.channel as Record<string, unknown>, `Channel of company ${companyId}:`);
  });
}
