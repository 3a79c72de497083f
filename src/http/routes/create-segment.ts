/** 4.1 Create segment: POST /api/segments/create (docs/api.md 4.1; docs/decisions.md#3-outcomes-of-the-four-operations: at most 20 per company). */
import { createSegment } from '../../domain/segments.ts';
import type { PublicOperation } from '../public-operation.ts';
import { RULES } from '../rate-limit.ts';
import { CreateSegment, type CreateSegmentBody } from '../validation/index.ts';

export const createSegmentOperation: PublicOperation<CreateSegmentBody> = {
  operationId: 'create_segment',
  summary: 'Create segment',
  description: 'Creates an empty static segment. Contacts are added with the segment-contacts operation. A company can hold at most 20 segments. Rate limit: 10 per 1 second.',
  url: '/api/segments/create',
  model: CreateSegment,
  rule: RULES.createSegment,
  errors: { 400: 'Segment limit reached' },
  successSchema: {
    content: { 'application/json': { schema: {
      type: 'object', required: ['name', 'segment_id'],
      properties: { name: { type: 'string' }, segment_id: { type: 'integer' } },
    } } },
  },
  // A name with U+0000 or lone surrogates is answered (and stored) with U+FFFD in their place: see
  // src/domain/storable.ts. The original stack would echo them; PostgreSQL cannot store them.
  handle: ({ deps, auth, body }) => createSegment(deps.database.db, auth.companyId, body.name),
};
