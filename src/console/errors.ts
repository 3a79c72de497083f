/**
 * HTML error pages of the console: unknown pages and ids (404, the same for another company's ids),
 * refused CSRF tokens (403), pages or changes the user's role may not use (403, {@link sendForbiddenPage}), oversized or non-form bodies (413, 415), and anything unexpected (500,
 * logged, never a stack trace). A 503 is answered while the database is unreachable or a statement ran past its
 * time limit (DB_STATEMENT_TIMEOUT).
 */
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { DomainError } from '../domain/errors.ts';
import type { AppDeps } from '../http/deps.ts';
import { isDatabaseUnavailable, isStatementTimeout, UNAVAILABLE_RETRY_AFTER_S } from '../http/errors.ts';
import { sendPage } from './context.ts';
import { isReadMethod, ROLE_SUMMARY } from './permissions.ts';
import { BASE } from './views/layout.ts';
import { html } from './views/html.ts';

/** Renders an error page with a heading, an explanation and a way back. */
export function sendErrorPage(request: FastifyRequest, reply: FastifyReply, status: number, title: string, text: string): FastifyReply {
  return sendPage(request, reply, status, {
    title,
    body: () => html`<article class="error-page"><h1>${title}</h1><p>${text}</p><p><a href="${BASE}/">Back to the console</a></p></article>`,
  });
}

/**
 * The 403 page of a request the signed-in user's role may not make: says which role
 * the user has, what it allows, and whom to ask. Nothing was written.
 */
export function sendForbiddenPage(request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const s = request.consoleSession;
  if (!s) return sendErrorPage(request, reply, 403, 'Not allowed', 'You may not do this.');
  const what = isReadMethod(request.method) ? 'open this page' : 'make this change';
  return sendErrorPage(request, reply, 403, 'Not allowed',
    `Your role is ${s.role} (${ROLE_SUMMARY[s.role]}) so you cannot ${what}. Nothing was changed. Ask an owner of ${s.company_name} if you need more access.`);
}

/** Installs the not-found and error handlers of the console context. */
export function registerErrorPages(scope: FastifyInstance, _deps: AppDeps): void {
  scope.setNotFoundHandler((request, reply) =>
    sendErrorPage(request, reply, 404, 'Page not found', 'There is no such page, or it belongs to another company.'));

  scope.setErrorHandler((err: FastifyError, request, reply) => {
    if (err instanceof DomainError) {
      if (err.status === 404) return sendErrorPage(request, reply, 404, 'Not found', `${err.detail}. It does not exist, or it belongs to another company.`);
      return sendErrorPage(request, reply, err.status, 'Request refused', err.detail);
    }
    if (err.code === 'FST_CSRF_INVALID_TOKEN' || err.code === 'FST_CSRF_MISSING_SECRET') {
      return sendErrorPage(request, reply, 403, 'Form expired',
        'This form has expired or did not come from this console. Go back, reload the page and try again.');
    }
    if (err.code === 'FST_ERR_CTP_BODY_TOO_LARGE') return sendErrorPage(request, reply, 413, 'Too much data', 'The form sent more data than the console accepts.');
    if (err.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') return sendErrorPage(request, reply, 415, 'Unsupported form', 'The console only accepts HTML form submissions.');
    if (isDatabaseUnavailable(err)) {
      reply.header('retry-after', String(UNAVAILABLE_RETRY_AFTER_S));
      return sendErrorPage(request, reply, 503, 'Temporarily unavailable', 'The service cannot reach its database right now. Try again in a few seconds.');
    }
    if (isStatementTimeout(err)) {
      // Over DB_STATEMENT_TIMEOUT (docs/operations.md "Statement time limits").
      request.log.warn({ err: { message: err.message, code: err.code }, route: request.routeOptions.url }, 'console: database statement timed out');
      reply.header('retry-after', String(UNAVAILABLE_RETRY_AFTER_S));
      return sendErrorPage(request, reply, 503, 'Temporarily unavailable', 'The database took too long to answer. Try again in a few seconds.');
    }
    if (err.statusCode && err.statusCode >= 400 && err.statusCode < 500) {
      return sendErrorPage(request, reply, err.statusCode, 'Request refused', 'The request could not be handled. Go back and try again.');
    }
    request.log.error({ err }, 'console: unhandled error');
    return sendErrorPage(request, reply, 500, 'Something went wrong', 'The console could not handle this request. Try again later.');
  });
}
