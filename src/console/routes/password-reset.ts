/** Password reset by one-time link (issue 15 item 5), pages without a session. Stub until written. */
import type { FastifyInstance } from 'fastify';
import type { AppDeps } from '../../http/deps.ts';

/** Registers the pages of this module on the console scope. */
export function registerPasswordResetPages(_scope: FastifyInstance, _deps: AppDeps): void {
}
