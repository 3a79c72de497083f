/** Overview (issue 15 item 6): GET /console/overview. Stub until written. */
import type { FastifyInstance } from 'fastify';
import type { AppDeps } from '../../http/deps.ts';

/** Registers the pages of this module on the console scope. */
export function registerOverviewPage(_scope: FastifyInstance, _deps: AppDeps): void {
}
