/**
 * `cms channel set`: PUT /admin/companies/{company_id}/channel (operator-api.md, "Providers").
 * outbox: `{provider}`; webhook: `{provider, url, secret?}` (without a secret the server generates a
 * `whsec_` one and returns it once: printed here); whatsapp:
 * `{provider, phone_number_id, access_token, api_base_url?, app_secret?, verify_token?}` (the last two
 * for webhooks in, docs/whatsapp.md). Secrets are never echoed back.
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
}

const flagsFor: Record<ChannelOptions['provider'], (keyof ChannelOptions)[]> = {
  outbox: [],
  webhook: ['url', 'secret'],
  whatsapp: ['phoneNumberId', 'accessToken', 'apiBaseUrl', 'appSecret', 'verifyToken'],
};

const flagName: Partial<Record<keyof ChannelOptions, string>> = {
  url: '--url',
  secret: '--secret',
  phoneNumberId: '--phone-number-id',
  accessToken: '--access-token',
  apiBaseUrl: '--api-base-url',
  appSecret: '--app-secret',
  verifyToken: '--verify-token',
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
      .option('--verify-token <token>', 'whatsapp: the verify token you enter in the Meta app\'s webhook settings', parseNonEmpty),
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
}
