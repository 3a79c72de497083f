/**
 * Who runs a domain command: the operator (the ADMIN_TOKEN holder, through the operator API or `cms`),
 * a console user (of one company) or an API key (of one company). Every command that changes something
 * takes an `Actor` and records its own audit entry with `audit()`; transports (src/http, src/console,
 * the CLI through the operator API) only build the actor and call the command (docs/architecture.md
 * "Domain commands").
 *
 * The audit log's `actor` text is unchanged from before commands existed: `admin` for the operator,
 * `console:<email>` for a console user, `key:<id>` for an API key.
 */
import { recordAudit } from './audit.ts';
import type { Db } from '../db/database.ts';

/** The operator: may act on any company. */
export interface OperatorActor { kind: 'operator' }
/** A signed-in console user: acts on its own company only. */
export interface ConsoleActor { kind: 'console'; email: string; companyId: number; userId?: number }
/** An API key of a company (the public API). */
export interface ApiKeyActor { kind: 'api-key'; keyId: number; companyId: number }

export type Actor = OperatorActor | ConsoleActor | ApiKeyActor;

/** The operator actor (one value; it carries nothing). */
export const OPERATOR: OperatorActor = Object.freeze({ kind: 'operator' as const });

/** A console user's actor. */
export function consoleActor(session: { email: string; company_id: number; user_id?: number }): ConsoleActor {
  return { kind: 'console', email: session.email, companyId: session.company_id, userId: session.user_id };
}

/** The audit log's `actor` text for an actor: `admin`, `console:<email>` or `key:<id>`. */
export function actorName(actor: Actor): string {
  switch (actor.kind) {
    case 'operator': return 'admin';
    case 'console': return `console:${actor.email}`;
    case 'api-key': return `key:${actor.keyId}`;
  }
}

/** What a command records: the action (e.g. `segment.rename`), its target (e.g. `segment:7`), the company, details without secrets. */
export interface AuditFact {
  action: string;
  target: string;
  companyId?: number | null;
  details?: Record<string, unknown>;
}

/** Records one audit entry for `actor` (in `db`, usually the command's transaction). */
export async function audit(db: Db, actor: Actor, fact: AuditFact): Promise<void> {
  await recordAudit(db, { actor: actorName(actor), action: fact.action, target: fact.target, company_id: fact.companyId ?? null, details: fact.details });
}
