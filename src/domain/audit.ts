/**
 * The operator audit log: who did what to which object, and when. Written by the
 * operator API for every change to companies, keys, contacts, automations, campaigns, connector and
 * channel; read with GET /admin/audit and `cms audit`. Secrets are never part of `details`.
 */
import { insertAuditRow, selectAuditRows } from '../db/audit.ts';
import type { Db } from '../db/database.ts';

export interface AuditEntry {
  actor: string;            // e.g. "admin" (the ADMIN_TOKEN holder) or "console:user@example.com"
  action: string;           // e.g. "company.create", "key.revoke"
  target: string;           // e.g. "company:12", "key:7"
  company_id?: number | null;
  details?: Record<string, unknown>;
}

/** Appends one entry. */
export async function recordAudit(db: Db, entry: AuditEntry): Promise<void> {
  await insertAuditRow(db, {
    actor: entry.actor,
    action: entry.action,
    target: entry.target,
    company_id: entry.company_id ?? null,
    details: JSON.stringify(entry.details ?? {}),
  });
}

/** The newest entries first, optionally of one company; at most `limit` (1 to 1000). */
export async function listAudit(db: Db, opts: { companyId?: number; limit?: number } = {}) {
  return selectAuditRows(db, Math.min(Math.max(opts.limit ?? 100, 1), 1000), opts.companyId);
}
