/** Operator API: a company's overview numbers (issue 15 item 6). Stub until written. */
import type { FastifyInstance } from 'fastify';
import type { AppDeps } from '../deps.ts';

/** Registers the overview routes on the admin scope. */
export function registerOverviewRoutes(_app: FastifyInstance, _deps: AppDeps): void {
}
