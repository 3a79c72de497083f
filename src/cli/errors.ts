/**
 * Error types of the CLI and its operator API client, and the exit codes they map to.
 * Expected failures are printed as one readable message (no stack trace); see `describeError`.
 */
import type { ValidationItem } from './api/types.ts';

/** Process exit codes of `cms`. */
export const EXIT = {
  ok: 0,
  /** The server refused the request (4xx/5xx) or a local operation failed (file, CSV). */
  failure: 1,
  /** Bad command line: unknown option, missing argument, conflicting options. */
  usage: 2,
  /** The server could not be reached (refused, DNS, timeout). */
  unreachable: 3,
} as const;

/** An expected local failure with a message meant for the user. */
export class CliError extends Error {
  readonly exitCode: number;
  constructor(message: string, exitCode: number = EXIT.failure) {
    super(message);
    this.name = 'CliError';
    this.exitCode = exitCode;
  }
}

/** A usage mistake found after parsing (e.g. `--secret` without `--provider webhook`); exit code 2. */
export class UsageError extends CliError {
  constructor(message: string) {
    super(message, EXIT.usage);
    this.name = 'UsageError';
  }
}

/** The operator API answered with a non-2xx status. `body` is the parsed JSON answer, if any. */
export class ApiError extends Error {
  readonly status: number;
  readonly method: string;
  readonly path: string;
  readonly body: unknown;
  constructor(status: number, method: string, path: string, body: unknown) {
    super(`${method} ${path} failed with HTTP ${status}`);
    this.name = 'ApiError';
    this.status = status;
    this.method = method;
    this.path = path;
    this.body = body;
  }

  /** `detail` of an Error body, `error` of a rate-limit body, or Fastify's `message`. */
  get detail(): string | undefined {
    const b = this.body as Record<string, unknown> | null;
    if (b && typeof b === 'object') {
      if (typeof b.detail === 'string') return b.detail;
      if (typeof b.error === 'string' && typeof b.message !== 'string') return b.error;
      if (typeof b.message === 'string') return b.message;
    }
    return typeof this.body === 'string' && this.body.trim() !== '' ? this.body.trim() : undefined;
  }

  /** The items of a 422 validation body (`detail: [{loc, msg, type}]`), else []. */
  get validationItems(): ValidationItem[] {
    const b = this.body as { detail?: unknown } | null;
    return b && typeof b === 'object' && Array.isArray(b.detail) ? (b.detail as ValidationItem[]) : [];
  }

  /**
   * True when the server has no such route at all, not a missing resource: a 405, Fastify's
   * default 404 (`{message: "Route GET:/x not found"}`), or the service's generic
   * `{detail: "Not Found"}` (resource 404s name the resource, e.g. "Batch not found").
   */
  get routeMissing(): boolean {
    if (this.status === 405) return true;
    if (this.status !== 404) return false;
    const b = this.body as { message?: unknown; detail?: unknown } | null;
    if (!b || typeof b !== 'object') return false;
    if (b.detail === 'Not Found') return true;
    return b.detail === undefined && typeof b.message === 'string' && b.message.startsWith('Route ');
  }
}

/** The server could not be reached at all (connection refused, unknown host, timeout). */
export class ConnectionError extends Error {
  readonly baseUrl: string;
  readonly code: string | undefined;
  constructor(baseUrl: string, code: string | undefined, cause?: unknown) {
    super(`cannot reach the server at ${baseUrl}${code ? ` (${code})` : ''}`, { cause });
    this.name = 'ConnectionError';
    this.baseUrl = baseUrl;
    this.code = code;
  }
}

/** Human-readable description of an error plus its exit code and a JSON form for `--json`. */
export interface ErrorReport {
  message: string;
  exitCode: number;
  json: Record<string, unknown>;
}

/**
 * Turn any thrown value into an `ErrorReport`; unknown errors keep their stack only with `CMS_DEBUG` in
 * `env` (the run's environment).
 */
export function describeError(err: unknown, env: Readonly<Record<string, string | undefined>> = {}): ErrorReport {
  if (err instanceof ApiError) return describeApiError(err);
  if (err instanceof ConnectionError) {
    return {
      message:
        `${err.message}.\n` +
        'Is the service running (`cms serve`)? Set the address with --url or CMS_URL.',
      exitCode: EXIT.unreachable,
      json: { error: 'unreachable', url: err.baseUrl, code: err.code ?? null },
    };
  }
  if (err instanceof CliError) {
    return { message: err.message, exitCode: err.exitCode, json: { error: err.message } };
  }
  const e = err instanceof Error ? err : new Error(String(err));
  const debug = !!env.CMS_DEBUG;
  return {
    message: `unexpected error: ${debug && e.stack ? e.stack : e.message}`,
    exitCode: EXIT.failure,
    json: { error: e.message },
  };
}

/** Message for a non-2xx answer: 401 hint, missing route, 422 items, 404 detail, else status + detail. */
function describeApiError(err: ApiError): ErrorReport {
  const json: Record<string, unknown> = { error: 'http', status: err.status, body: err.body ?? null };
  const where = `${err.method} ${err.path}`;
  let message: string;
  if (err.status === 401) {
    message =
      `unauthorized (HTTP 401)${err.detail ? `: ${err.detail}` : ''}.\n` +
      'Check the admin token: --token, ADMIN_TOKEN, or the admin-token file in DATA_DIR.';
  } else if (err.routeMissing) {
    message = `this server does not provide ${where} (HTTP ${err.status}); it may be an older version.`;
  } else if (err.status === 422 && err.validationItems.length > 0) {
    const lines = err.validationItems.map((it) => {
      const loc = Array.isArray(it.loc) ? it.loc.join('.') : '';
      return `  - ${loc ? `${loc}: ` : ''}${it.msg}${it.type ? ` (${it.type})` : ''}`;
    });
    message = `the server rejected the request (HTTP 422):\n${lines.join('\n')}`;
  } else if (err.status === 404) {
    message = `not found (HTTP 404)${err.detail ? `: ${err.detail}` : ''}`;
  } else {
    message = `${where} failed with HTTP ${err.status}${err.detail ? `: ${err.detail}` : ''}`;
  }
  return { message, exitCode: EXIT.failure, json };
}
