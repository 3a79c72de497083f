/**
 * The answer checks of the fuzz suite: every 4xx body has one of the three error shapes of
 * docs/api.md#error-bodies (exactly those keys, validation items in the key order of
 * docs/decisions.md#1-request-handling-order, step 5), every answer is
 * JSON with a JSON Content-Type, and documented statuses match their OpenAPI schema.
 */
import type { ValidateFunction } from 'ajv/dist/2020.js';

const ITEM_KEYS = ['type', 'loc', 'msg', 'input', 'ctx'];

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/**
 * Returns what is wrong with a 4xx body, or null when it is `{detail: string}`,
 * `{detail: [{type, loc, msg, input?, ctx?}, ...]}` or `{error: string}`.
 */
export function errorShapeProblem(body: unknown): string | null {
  if (!isPlainObject(body)) return 'body is not a JSON object';
  const keys = Object.keys(body);
  if (keys.length !== 1) return `body has keys ${JSON.stringify(keys)}, expected exactly one of detail / error`;
  if (keys[0] === 'error') return typeof body.error === 'string' ? null : '`error` is not a string';
  if (keys[0] !== 'detail') return `unexpected key ${JSON.stringify(keys[0])}`;
  const detail = body.detail;
  if (typeof detail === 'string') return null;
  if (!Array.isArray(detail)) return '`detail` is neither a string nor an array';
  if (detail.length === 0) return '`detail` is an empty array';
  for (const [i, item] of detail.entries()) {
    if (!isPlainObject(item)) return `detail[${i}] is not an object`;
    const k = Object.keys(item);
    const order = k.map((x) => ITEM_KEYS.indexOf(x));
    if (order.some((o) => o < 0)) return `detail[${i}] has keys ${JSON.stringify(k)}`;
    if (order.some((o, j) => j > 0 && o <= order[j - 1])) return `detail[${i}] keys out of order: ${JSON.stringify(k)}`;
    if (typeof item.type !== 'string' || typeof item.msg !== 'string') return `detail[${i}] type/msg not strings`;
    if (!Array.isArray(item.loc) || !item.loc.every((p) => typeof p === 'string' || Number.isInteger(p))) return `detail[${i}].loc is not a list of strings and integers`;
    if ('ctx' in item && !isPlainObject(item.ctx)) return `detail[${i}].ctx is not an object`;
  }
  return null;
}

/** Formats Ajv's errors briefly. */
export function ajvProblem(validate: ValidateFunction): string {
  return (validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message}`).join('; ');
}
