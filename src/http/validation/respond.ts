/**
 * Which answer a request gets, in the order of decisions.md section 1: body parsing (step 2)
 * comes before authentication (step 3), which comes before validation (step 5). This is how
 * FastAPI behaves: the body is read and JSON-decoded before dependencies run, while the
 * "missing body" and model errors are produced after them. Subscription (step 4) and rate
 * limiting (step 6) belong to the routes, between these calls.
 *
 * All answers are `application/json`; the bodies are byte-exact copies of FastAPI's.
 */

import type { BodyParse } from './body.ts';
import { renderValidationError, type ValidationErrorItem } from './errors.ts';
import type { Validated } from './validate.ts';

/** A complete HTTP answer. Header names are lowercase. */
export interface HttpAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Outcome of checking the `service-api-key` header: absent or empty, unknown, or good. */
export type AuthOutcome = 'ok' | 'missing' | 'invalid';

/** Largest accepted body (decisions.md section 1 step 2); larger ones get {@link bodyTooLarge}. */
export const MAX_BODY_BYTES = 1024 * 1024;

const JSON_TYPE = 'application/json';

/** 413 for a body over {@link MAX_BODY_BYTES}: decided with body parsing, before auth. */
export function bodyTooLarge(): HttpAnswer {
  return { status: 413, headers: { 'content-type': JSON_TYPE }, body: '{"detail":"Request body too large"}' };
}

/** Step 2: 400 for an unparseable body, 422 for malformed JSON, else null. */
export function bodyParseFailure(parse: BodyParse): HttpAnswer | null {
  if (parse.kind === 'unparseable') {
    return { status: 400, headers: { 'content-type': JSON_TYPE }, body: '{"detail":"There was an error parsing the body"}' };
  }
  if (parse.kind === 'invalid') return validationFailed(parse.errors);
  return null;
}

/** Step 3: 401 with FastAPI's APIKeyHeader texts, else null. */
export function authFailure(auth: AuthOutcome): HttpAnswer | null {
  if (auth === 'missing') {
    return { status: 401, headers: { 'content-type': JSON_TYPE, 'www-authenticate': 'APIKey' }, body: '{"detail":"Not authenticated"}' };
  }
  if (auth === 'invalid') return { status: 401, headers: { 'content-type': JSON_TYPE }, body: '{"detail":"Invalid API key"}' };
  return null;
}

/** The 422 answer for validation errors. */
export function validationFailed(errors: readonly ValidationErrorItem[]): HttpAnswer {
  return { status: 422, headers: { 'content-type': JSON_TYPE }, body: renderValidationError(errors) };
}

/** Step 3 helper: classifies a `service-api-key` header value (`isKnown` checks a non-empty key). */
export function classifyApiKey(value: string | undefined, isKnown: (key: string) => boolean): AuthOutcome {
  if (!value) return 'missing';
  return isKnown(value) ? 'ok' : 'invalid';
}

/**
 * The first failing answer among steps 2, 3 and 5, or null when the request may proceed.
 * `validate` runs only when steps 2 and 3 pass.
 */
export function decideStatus(parse: BodyParse, auth: AuthOutcome, validate: () => Validated<unknown>): HttpAnswer | null {
  const parseFailed = bodyParseFailure(parse);
  if (parseFailed) return parseFailed;
  const authFailed = authFailure(auth);
  if (authFailed) return authFailed;
  const v = validate();
  return v.ok ? null : validationFailed(v.errors);
}
