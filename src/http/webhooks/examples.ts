/**
 * Examples of the provider webhooks for the OpenAPI document, by operationId:
 * Meta's payloads as Meta sends them (docs/whatsapp.md) and a gateway's receipts (docs/decisions.md#7-a-messages-life
 * §4), with the answers the routes give. Applied by `completeDocument` (../openapi-schemas.ts).
 */
import type { PublicExamples } from '../openapi-schemas.ts';

const invalidSignature = { summary: 'Missing or wrong signature', value: { detail: 'Invalid signature' } };
const tooLarge = { 413: { too_large: { summary: 'Body over 4 MiB', value: { detail: 'Request body too large' } } } };

/** A message id of this service (what the webhook provider sent as `message_id`). */
const MESSAGE_ID = '3f0c9a52-8d1e-4b7a-9c2f-6e5d4a3b2c1d';

export const WEBHOOK_EXAMPLES: Readonly<Record<string, PublicExamples>> = {
  whatsapp_webhook_verify: {
    request: {},
    responses: {
      200: { challenge: { summary: 'The hub.challenge, echoed', value: '1158201444' } },
      403: { refused: { summary: 'Unknown verify token', value: { detail: 'Verification failed' } } },
    },
  },
  whatsapp_webhook_receive: {
    request: {
      status: {
        summary: 'A message was delivered',
        value: {
          object: 'whatsapp_business_account',
          entry: [{
            id: '102290129340398',
            changes: [{
              field: 'messages',
              value: {
                messaging_product: 'whatsapp',
                metadata: { display_phone_number: '15550783881', phone_number_id: '106540352242922' },
                statuses: [{ id: 'wamid.HBgNNDkxNTExMjM0NTY3OBUCABEYEjM2QjBBRjE4QjcyRDlFOEQ0RQA=', status: 'delivered', timestamp: '1780315205', recipient_id: '4915112345678' }],
              },
            }],
          }],
        },
      },
      inbound: {
        summary: 'A contact replied STOP (opts out of campaigns)',
        value: {
          object: 'whatsapp_business_account',
          entry: [{
            id: '102290129340398',
            changes: [{
              field: 'messages',
              value: {
                messaging_product: 'whatsapp',
                metadata: { display_phone_number: '15550783881', phone_number_id: '106540352242922' },
                contacts: [{ profile: { name: 'Anna Schmidt' }, wa_id: '4915112345678' }],
                messages: [{ from: '4915112345678', id: 'wamid.HBgNNDkxNTExMjM0NTY3OBUCABIYFjNFQjBDMkE0RjFCNkE5RDc4QzJFAA==', timestamp: '1780315290', type: 'text', text: { body: 'STOP' } }],
              },
            }],
          }],
        },
      },
      template: {
        summary: 'Meta paused a template (an account-level field, routed by the WABA id in entry[].id)',
        value: {
          object: 'whatsapp_business_account',
          entry: [{
            id: '102290129340398',
            time: 1780315400,
            changes: [{
              field: 'message_template_status_update',
              value: { event: 'PAUSED', message_template_id: 1689556908129835, message_template_name: 'order_shipped', message_template_language: 'en_US', reason: 'NONE' },
            }],
          }],
        },
      },
    },
    responses: {
      200: { enqueued: { summary: 'One status enqueued for applying', value: { statuses: 1, messages: 0 } } },
      400: { shape: { summary: 'Not a WhatsApp Business payload', value: { detail: 'object must be "whatsapp_business_account"' } } },
      401: { signature: invalidSignature },
      ...tooLarge,
    },
  },
  provider_status_receive: {
    request: {
      receipts: {
        summary: 'One message delivered, one failed',
        value: {
          statuses: [
            { message_id: MESSAGE_ID, status: 'delivered', timestamp: '2026-06-01T12:00:05Z' },
            { message_id: '9b2e4d71-0c3a-4f85-b6d2-1a7e8c5f3094', status: 'failed', timestamp: '2026-06-01T12:00:07Z', error: { code: '30008', title: 'Unreachable handset' } },
          ],
        },
      },
    },
    responses: {
      200: { enqueued: { summary: 'Two receipts enqueued for applying', value: { statuses: 2 } } },
      400: { shape: { summary: 'Not the documented shape', value: { detail: 'statuses must be a non-empty array' } } },
      401: { signature: invalidSignature, unknown: { summary: 'A message_id that is not a message of a webhook-channel company', value: { detail: 'Unknown message_id' } } },
      ...tooLarge,
    },
  },
};
