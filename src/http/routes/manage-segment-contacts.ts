/**
 * 4.2 Manage segment contacts: POST /api/segments/{segment_id}/contacts (docs/api.md 4.2, version 2.0.0;
 * docs/decisions.md#3-outcomes-of-the-four-operations, #5-phone-numbers-and-digests). Needs an active subscription.
 */
import { manageSegmentContacts } from '../../domain/segments.ts';
import type { PublicOperation } from '../public-operation.ts';
import { RULES } from '../rate-limit.ts';
import { ManageSegmentContacts, type ManageSegmentContactsBody } from '../validation/index.ts';

const count = { type: 'integer' } as const;

export const manageSegmentContactsOperation: PublicOperation<ManageSegmentContactsBody> = {
  operationId: 'manage_segment_contacts',
  summary: 'Manage segment contacts',
  description: 'Adds existing contacts to a static segment or removes them, matched by phone number or by the SHA-256 hex digest of the E.164 number (use_hashed_phone). Numbers with no existing contact are counted as not found and are not created. Up to 1000 contacts per request. Requires an active subscription. Rate limit: 1 per 1 minute. Version 2.0.0.',
  url: '/api/segments/:segment_id/contacts',
  pathParams: ['segment_id'],
  model: ManageSegmentContacts,
  rule: RULES.manageSegmentContacts,
  requiresSubscription: true,
  errors: { 403: 'The company has no active subscription', 404: 'Segment not found', 409: 'Segment is dynamic: its members follow its filter' },
  successSchema: {
    content: { 'application/json': { schema: {
      type: 'object',
      required: ['segment_id', 'mode', 'contacts_provided', 'contacts_found', 'contacts_not_found', 'contacts_processed'],
      properties: {
        segment_id: count, mode: { type: 'string', enum: ['add', 'delete'] }, contacts_provided: count,
        contacts_found: count, contacts_not_found: count, contacts_processed: count,
      },
    } } },
  },
  handle: ({ deps, auth, body, path }) =>
    manageSegmentContacts(deps.database.db, auth.companyId, auth.defaultCountry, path.segment_id, body),
};
