/**
 * Segments of one company with member counts, for console pages that offer a choice of segments (the
 * campaign send form). Scoped to the company; a dynamic segment's count is the contacts matching its
 * filter at `now` (src/domain/segments.ts `listSegments`; the SQL is in src/db/segments.ts).
 */
import type { Db } from '../../db/database.ts';
import type { SegmentSummary } from '../../db/segments.ts';
import { listSegments } from '../../domain/segments.ts';

/** A segment with its member count. */
export type SegmentRow = SegmentSummary;

/** All segments of the company (at most 20, docs/api.md) with their member counts at `now` (ms), oldest first. */
export function listCompanySegments(db: Db, companyId: number, now: number): Promise<SegmentRow[]> {
  return listSegments(db, companyId, now);
}
