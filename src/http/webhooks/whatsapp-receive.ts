/**
 * POST /webhooks/whatsapp (docs/decisions.md#9-whatsapp-webhooks-in; docs/whatsapp.md "Webhook fields"): every field
 * Meta posts — statuses and inbound messages (`messages`), template status / quality / category,
 * phone number quality and limit, account updates, and any other field.
 *
 * 1. The raw body must be JSON of Meta's shape (`object: "whatsapp_business_account"`; a change with
 *    `metadata` (every `messages` change) names digits in `metadata.phone_number_id`, any other names its
 *    WABA in `entry[].id`; template and account changes name what they change): else 400.
 * 2. Every phone_number_id must be a company's WhatsApp channel with an app secret, every WABA id of an
 *    account-level change must be the `waba_id` of at least one WhatsApp channel with an app secret, and
 *    `X-Hub-Signature-256` must verify (constant time) with each of their app secrets and with the app
 *    secret of every channel of every WABA the payload names (`entry[].id`, also beside phone numbers):
 *    else 401 (an unknown phone_number_id or WABA is 401 too: nobody here can vouch for the payload).
 *    An entry naming a phone number must name that number's WABA ({@link wabaBelongs}): else 401, so a
 *    payload never applies under another company's WABA. Nothing is written. An app secret that cannot
 *    be decrypted (SECRETS_KEY changed) is 401 too, logged at `error`.
 * 3. One durable `receipts-apply` job per company is enqueued (a WABA's changes go to each of its
 *    channels), every change is counted in `cms_whatsapp_webhook_changes_total{field, handling}`, then
 *    200 `{"statuses": n, "messages": m}`: the answer waits only for the job INSERT, never for applying.
 */
import type { FastifyInstance } from 'fastify';
import { findWhatsappChannels } from '../../db/receipts.ts';
import { findChannelsByWaba } from '../../db/whatsapp-webhooks.ts';
import type { AccountChange } from '../../domain/channel-changes.ts';
import { PayloadError, type InboundItem, type StatusItem } from '../../domain/receipts.ts';
import { fieldLabel, parseWhatsappPayload, verifyHubSignature } from '../../providers/whatsapp/webhooks.ts';
import { whatsappWebhookChanges } from '../../metrics.ts';
import type { ReceiptsJob } from '../../queue/handlers/receipts-apply.ts';
import { storable } from '../../domain/storable.ts';
import type { AppDeps } from '../deps.ts';
import { sendDetail } from '../errors.ts';
import { errorSchemas } from '../openapi-schemas.ts';

/**
 * Parses the raw body as JSON (PayloadError when it is not) and makes its strings storable (U+0000 and
 * lone surrogates become U+FFFD: PostgreSQL's text refuses them; the signature was over the bytes).
 */
export function parseJson(raw: unknown): unknown {
  if (!Buffer.isBuffer(raw) || raw.length === 0) throw new PayloadError('body must be JSON');
  let value: unknown;
  try {
    value = JSON.parse(raw.toString('utf8'));
  } catch {
    throw new PayloadError('body must be JSON');
  }
  try {
    return storable(value);
  } catch {
    throw new PayloadError('body is nested too deeply'); // RangeError: the walk's stack ran out
  }
}

/**
 * Meta's payload as far as the route reads it (documentation: the route checks the shape itself, 400);
 * other properties are allowed and ignored.
 */
const whatsappPayloadSchema = {
  type: 'object', required: ['object', 'entry'], additionalProperties: true,
  properties: {
    object: { type: 'string', enum: ['whatsapp_business_account'] },
    entry: {
      type: 'array', minItems: 1,
      items: {
        type: 'object', required: ['changes'], additionalProperties: true,
        properties: {
          id: { type: 'string', description: 'WhatsApp Business Account id' },
          changes: {
            type: 'array',
            items: {
              type: 'object', required: ['value'], additionalProperties: true,
              properties: {
                field: { type: 'string', description: 'Meta\'s webhook field: messages, message_template_status_update, message_template_quality_update, template_category_update, phone_number_quality_update, account_update, ... (docs/whatsapp.md)' },
                value: {
                  type: 'object', additionalProperties: true,
                  description: '`messages` changes carry `metadata.phone_number_id`; account-level fields are routed by the entry\'s WABA id',
                  properties: {
                    messaging_product: { type: 'string', enum: ['whatsapp'] },
                    metadata: {
                      type: 'object', required: ['phone_number_id'], additionalProperties: true,
                      properties: { phone_number_id: { type: 'string', pattern: '^[0-9]+$', description: 'the sending number of a company\'s WhatsApp channel' }, display_phone_number: { type: 'string' } },
                    },
                    contacts: { type: 'array', items: { type: 'object', additionalProperties: true, description: 'Meta\'s contact profiles: `profile.name` fills an empty first_name' } },
                    statuses: { type: 'array', items: { type: 'object', additionalProperties: true, description: 'Meta\'s status object: id (wamid), status, timestamp, recipient_id, errors' } },
                    messages: { type: 'array', items: { type: 'object', additionalProperties: true, description: 'Meta\'s message object: from, id, timestamp, type, text' } },
                  },
                },
              },
            },
          },
        },
      },
    },
  },
} as const;

/**
 * The WABA rule of an entry that names a phone number (docs/whatsapp.md "What the service does with a
 * webhook"): the entry's WABA id `entryWaba` must be the `waba_id` of the channel the number belongs to
 * (`channelWaba`); a channel without `waba_id` accepts only a WABA id that no WhatsApp channel here has
 * (`knownWabas`: the waba_ids of the channels of the payload's WABAs). False: the payload is refused.
 */
export function wabaBelongs(entryWaba: string, channelWaba: string | null, knownWabas: ReadonlySet<string>): boolean {
  return channelWaba ? channelWaba === entryWaba : !knownWabas.has(entryWaba);
}

/** Registers `POST /webhooks/whatsapp` (see the module comment for the checks and answers). */
export function registerWhatsappReceive(app: FastifyInstance, deps: AppDeps): void {
  app.post('/webhooks/whatsapp', {
    schema: {
      tags: ['webhooks'], operationId: 'whatsapp_webhook_receive',
      summary: "Meta's WhatsApp webhooks: every field (statuses, inbound messages, templates, quality, account), signed X-Hub-Signature-256",
      description: 'Body: Meta\'s payload, at most 4 MiB (413 beyond). Applied durably after the answer. See docs/whatsapp.md.',
      headers: {
        type: 'object',
        properties: { 'x-hub-signature-256': { type: 'string', description: 'sha256=<hex HMAC-SHA256 of the raw body with the app secret>', examples: ['sha256=5f1d0c7e9b2a4c6d8e0f1a3b5c7d9e1f2a4b6c8d0e2f4a6b8c0d2e4f6a8b0c2d'] } },
      },
      body: whatsappPayloadSchema,
      response: {
        200: {
          description: 'Accepted: enqueued for applying',
          type: 'object', required: ['statuses', 'messages'],
          properties: { statuses: { type: 'integer', description: 'statuses in the payload' }, messages: { type: 'integer', description: 'inbound messages in the payload' } },
        },
        400: { description: 'Not JSON, or not the shape of a WhatsApp Business webhook', ...errorSchemas.detail },
        401: { description: 'Missing or wrong signature, or a phone_number_id / WABA id that is not a WhatsApp channel with an app secret here', ...errorSchemas.detail },
        413: { description: 'Body over 4 MiB', ...errorSchemas.detail },
      },
    },
  }, async (request, reply) => {
    const raw = request.body as Buffer;
    let changes;
    try {
      changes = parseWhatsappPayload(parseJson(raw));
    } catch (err) {
      if (err instanceof PayloadError) return sendDetail(reply, 400, err.message);
      throw err;
    }
    const numberIds = [...new Set(changes.flatMap((c) => (c.phoneNumberId ? [c.phoneNumberId] : [])))];
    // Every WABA the payload names: of account-level changes, and the entry ids of phone-number changes.
    const wabaIds = [...new Set(changes.flatMap((c) => (c.wabaId ? [c.wabaId] : [])))];
    const accountWabaIds = new Set(changes.flatMap((c) => (!c.phoneNumberId && c.wabaId ? [c.wabaId] : [])));
    const db = deps.database.db;
    const [channels, wabaChannels] = await Promise.all([
      numberIds.length ? findWhatsappChannels(db, numberIds) : Promise.resolve([]),
      findChannelsByWaba(db, wabaIds),
    ]);
    const byNumber = new Map(channels.map((c) => [c.phone_number_id, c]));
    // A WABA's channels that can receive webhooks (those with an app secret); none: nobody vouches for it.
    const byWaba = new Map<string, { company_id: number; app_secret_sealed: string }[]>();
    for (const c of wabaChannels) {
      if (!c.app_secret_sealed) continue;
      byWaba.set(c.waba_id, [...(byWaba.get(c.waba_id) ?? []), { company_id: c.company_id, app_secret_sealed: c.app_secret_sealed }]);
    }
    const header = request.headers['x-hub-signature-256'];
    const verifies = (owner: { company_id: number; app_secret_sealed: string | null } | undefined, naming: Record<string, string>) => {
      let secret: string | undefined;
      try {
        secret = owner?.app_secret_sealed ? deps.openSecret(owner.app_secret_sealed) : undefined;
      } catch {
        // Not the sender's fault: the operator must see it.
        request.log.error({ company_id: owner?.company_id, ...naming }, 'cannot decrypt the WhatsApp app secret of this channel (was SECRETS_KEY changed?): webhook refused with 401');
        secret = undefined;
      }
      return !!secret && verifyHubSignature(raw, typeof header === 'string' ? header : undefined, secret);
    };
    for (const id of numberIds) {
      if (!verifies(byNumber.get(id), { phone_number_id: id })) return sendDetail(reply, 401, 'Invalid signature');
    }
    for (const id of wabaIds) {
      const owners = byWaba.get(id) ?? [];
      // An account-level change needs someone here to vouch for its WABA; an entry id beside a phone number
      // is checked against that number's channel below.
      if ((owners.length === 0 && accountWabaIds.has(id)) || !owners.every((o) => verifies(o, { waba_id: id }))) return sendDetail(reply, 401, 'Invalid signature');
    }
    const wabaKnown = new Set(wabaChannels.map((c) => c.waba_id));
    for (const change of changes) {
      if (!change.phoneNumberId || change.wabaId === undefined) continue;
      const channel = byNumber.get(change.phoneNumberId)!;
      if (!wabaBelongs(change.wabaId, channel.waba_id, wabaKnown)) {
        request.log.warn({ company_id: channel.company_id, phone_number_id: change.phoneNumberId, waba_id: change.wabaId, channel_waba_id: channel.waba_id },
          'WhatsApp webhook names a phone number with a WABA id that is not its channel\'s: refused with 401, nothing applied');
        return sendDetail(reply, 401, 'Invalid signature');
      }
    }
    const jobs = new Map<number, { statuses: StatusItem[]; messages: InboundItem[]; account: AccountChange[] }>();
    const jobOf = (companyId: number) => {
      let job = jobs.get(companyId);
      if (!job) jobs.set(companyId, (job = { statuses: [], messages: [], account: [] }));
      return job;
    };
    let statuses = 0;
    let messages = 0;
    const counted: { field: string; handling: 'applied' | 'ignored' }[] = [];
    for (const change of changes) {
      const owners = change.phoneNumberId ? [byNumber.get(change.phoneNumberId)!.company_id] : byWaba.get(change.wabaId!)!.map((o) => o.company_id);
      for (const companyId of owners) {
        const job = jobOf(companyId);
        for (const s of change.statuses) job.statuses.push(s);
        for (const m of change.messages) job.messages.push(m);
        if (change.account) job.account.push(change.account);
      }
      statuses += change.statuses.length;
      messages += change.messages.length;
      const applied = change.field === 'messages' || change.account !== undefined;
      counted.push({ field: fieldLabel(change.field), handling: applied ? 'applied' : 'ignored' });
    }
    for (const [companyId, job] of jobs) {
      if (job.statuses.length === 0 && job.messages.length === 0 && job.account.length === 0) continue;
      const data: ReceiptsJob = {
        company_id: companyId, by: 'provider_message_id', source: 'whatsapp', statuses: job.statuses,
        ...(job.messages.length ? { messages: job.messages } : {}), ...(job.account.length ? { account: job.account } : {}),
      };
      await deps.boss.send('receipts-apply', data);
    }
    for (const c of counted) whatsappWebhookChanges.inc(c);
    return reply.code(200).send({ statuses, messages });
  });
}
