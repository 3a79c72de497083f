/** Users and roles (issue 15 item 5): /console/settings/users. Stub until written. */
import type { FastifyInstance } from 'fastify';
import type { AppDeps } from '../../http/deps.ts';

/** Registers the pages of this module on the console scope. */
export function registerUsersPages(_scope: FastifyInstance, _deps: AppDeps): void {
}
