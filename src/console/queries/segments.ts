/**
 * Segments of one company with member counts, for console pages that offer a choice of segments (the
 * campaign send form). Scoped to the company; the SQL is in src/db/segments.ts.
 */
import type { Db } from '../../db/database.ts';
import { selectSegments, type SegmentSummary } from '../../db/segments.ts';

/** A segment with its member count. */
export type SegmentRow = SegmentSummary;

/** All segments of the company (at most 20, docs/api.md) with their member counts, oldest first. */
export function listCompanySegments(db: Db, companyId: number): Promise<SegmentRow[]> {
  return selectSegments(db, companyId);
}
