/**
 * Error answers shared by every route (docs/decisions.md#1-request-handling-order): `{"detail": "..."}` bodies, the 503 for an
 * unreachable database or a statement over its time limit, and the classification of errors that must never surface as a stack trace.
 */
import type { FastifyReply } from 'fastify';

/** Sends `{"detail": detail}` with the status (compact JSON, non-ASCII written raw, as FastAPI does). */
export function sendDetail(reply: FastifyReply, status: number, detail: unknown, headers: Record<string, string> = {}): FastifyReply {
  return sendJsonText(reply.headers(headers), status, JSON.stringify({ detail }));
}

/** Sends an already serialised JSON text, as `application/json` without a charset (as Starlette does). */
export function sendJsonText(reply: FastifyReply, status: number, text: string): FastifyReply {
  // A Buffer, because Fastify appends "; charset=utf-8" to JSON content types of string payloads.
  return reply.code(status).header('content-type', 'application/json').send(Buffer.from(text, 'utf8'));
}

const CONNECTION_CODES = new Set([
  'ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EHOSTUNREACH', 'EAI_AGAIN',
  '57P01', '57P02', '57P03', '53300', '08000', '08001', '08003', '08004', '08006', '08P01',
]);

/** True when `err` says the database cannot be reached now (answered 503, retried by the client). */
export function isDatabaseUnavailable(err: unknown): boolean {
  const e = err as { code?: string; message?: string; errors?: unknown[] } | undefined;
  if (!e) return false;
  if (e.code && CONNECTION_CODES.has(e.code)) return true;
  if (Array.isArray(e.errors) && e.errors.some(isDatabaseUnavailable)) return true; // AggregateError (IPv4+IPv6)
  const msg = e.message ?? '';
  return /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|connection is closed|Cannot use a pool after calling end/i.test(msg);
}

/**
 * True when `err` is PostgreSQL's `query_canceled` (SQLSTATE 57014): a statement ran past its
 * `statement_timeout` (`DB_STATEMENT_TIMEOUT`, docs/operations.md "Statement time limits") or was
 * cancelled by an administrator. Answered like an unreachable database (503 with Retry-After; the
 * statement's transaction was rolled back) and logged; never a 500.
 */
export function isStatementTimeout(err: unknown): boolean {
  return (err as { code?: unknown } | undefined)?.code === '57014';
}

/** Seconds a client should wait before retrying while the database is unavailable. */
export const UNAVAILABLE_RETRY_AFTER_S = 5;
