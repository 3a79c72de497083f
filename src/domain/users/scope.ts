/**
 * Which company's console users an actor may act on: a console user or an API key only its own; the
 * operator any, or the one it names (company-scoped operator views). A user or invitation outside the
 * scope answers 404 exactly as an unknown one.
 */
import type { Actor } from '../actor.ts';

/** The company an actor's user commands are limited to; undefined: any company. */
export function companyScope(actor: Actor, companyId?: number): number | undefined {
  return actor.kind === 'operator' ? companyId : actor.companyId;
}
