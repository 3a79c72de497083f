/**
 * 4.4 Send campaign through the connector: POST /api/connector/send (docs/api.md 4.4; docs/decisions.md#3-outcomes-of-the-four-operations, #6-contacts-personalisation-sending).
 * Checks the campaign (this company's) and that the push-messaging connector is connected, then commits
 * the batch with its job before answering `accepted`.
 */
import { findCampaign } from '../../domain/automations.ts';
import { distinctItems } from '../../domain/batches.ts';
import { DomainError } from '../../domain/errors.ts';
import type { PublicOperation } from '../public-operation.ts';
import { RULES } from '../rate-limit.ts';
import { ConnectorSend, type ConnectorSendBody } from '../validation/index.ts';
import { acceptSend } from './accept-send.ts';

const answer = (batchId: string, contacts: number) => ({
  message: `Campaign send queued for ${contacts} contacts (batch ${batchId})`,
  status: 'accepted',
});

export const connectorSendOperation: PublicOperation<ConnectorSendBody> = {
  operationId: 'connector_send',
  summary: 'Send campaign through the connector',
  description: 'Sends a campaign to a list of contacts through the connected third-party push-messaging provider connector; queued and processed in the background. Opted-out contacts are skipped and messages outside the company delivery hours are held until the window opens. Rate limit: 1 per 10 second. Optional Idempotency-Key header.',
  url: '/api/connector/send',
  model: ConnectorSend,
  rule: RULES.connectorSend,
  errors: { 403: 'The push-messaging connector is not connected', 404: 'Campaign not found' },
  successSchema: {
    content: { 'application/json': { schema: {
      type: 'object', required: ['message', 'status'],
      properties: { message: { type: 'string' }, status: { type: 'string', enum: ['accepted'] } },
    } } },
  },
  idempotent: true,
  recordsAnswer: true,
  async handle(ctx) {
    const { deps, auth, body } = ctx;
    const campaign = await findCampaign(deps.database.db, auth.companyId, body.campaign_id);
    if (!auth.connectorConnected) throw new DomainError(403, 'The push-messaging connector is not connected');
    const items = distinctItems(body.contacts.map((c) => ({ phone: c.phone })), auth.defaultCountry);
    return acceptSend(ctx, {
      kind: 'campaign',
      sourceId: campaign.campaign_id,
      template: campaign.template,
      items,
      ignored: 0,
      overrides: {},
    }, (batchId) => answer(batchId, items.length));
  },
};
