/** Operator API: segments (issue 15 item 3). Stub until written. */
import type { FastifyInstance } from 'fastify';
import type { AppDeps } from '../deps.ts';

/** Registers the segment routes on the admin scope. */
export function registerSegmentRoutes(_app: FastifyInstance, _deps: AppDeps): void {
}
