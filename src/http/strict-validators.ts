/**
 * The operator API's request validators: the documented schemas held strictly (docs/operator-api.md,
 * "Conventions"). The admin plugin (src/http/admin/plugin.ts) installs {@link strictValidators} for
 * its whole scope; the public API (its own validator, src/http/validation) and the console (form
 * bodies, Fastify's defaults) keep theirs.
 *
 * Fastify's default Ajv options coerce types (`coerceTypes: 'array'`: `5` is accepted as the string
 * `"5"`, `null` as `false`, `12345` as `["12345"]`) and remove, instead of refusing, the properties an
 * `additionalProperties: false` object does not list (`removeAdditional: true`). Here:
 *
 * - **bodies**: no coercion and no removal ({@link STRICT_AJV_OPTIONS}): a value of another JSON type
 *   than the schema's is a 422, and so is an unknown property of an object whose schema says
 *   `additionalProperties: false` (the operator API does not promise to ignore unknown fields there;
 *   objects without it accept and ignore them, as their schema says). `default`s are still filled in.
 * - **path, query and headers** are text: a value is read as the schema's scalar type only when it is
 *   written as that type's JSON text ({@link readUrlValues}: `42` for an integer, not `0x2A`, `42.0`,
 *   ` 42` or `4.2e1`; `true` / `false` for a boolean); otherwise it stays a string and fails the type
 *   check (422). A repeated query parameter is an array; one occurrence of an array parameter is an
 *   array of one.
 *
 * A scope with its own validator compiler gets its header schemas as written (Fastify lower-cases
 * the property names of a header schema only for its default compiler): name headers in lower case.
 */
import { AjvCompiler } from '@fastify/ajv-compiler';
import { compilingOnFirstUse, type AjvOptions, type CompiledSchemas, type RouteCompiler, type RouteDefinition, type ValidateFunction } from './lazy-compilers.ts';

/** Ajv options over Fastify's defaults for strict validation: nothing coerced, nothing removed. */
export const STRICT_AJV_OPTIONS = { coerceTypes: false, removeAdditional: false } as const;

/** The options a strict validator is compiled with (Fastify's plugins: ajv-formats, added by the compiler). */
const STRICT_OPTIONS = { customOptions: { ...STRICT_AJV_OPTIONS }, plugins: [] } as unknown as AjvOptions;

/** The parts of a request that arrive as text (URL path, query string, headers). */
const TEXT_PARTS = new Set(['params', 'querystring', 'headers']);

const INTEGER = /^-?[0-9]+$/;
const NUMBER = /^-?[0-9]+(\.[0-9]+)?([eE][+-]?[0-9]+)?$/;

type Schema = { type?: unknown; items?: unknown; properties?: Record<string, unknown> };

/** The JSON types a schema names in `type` (none when it has no `type`, e.g. a `$ref` or `anyOf`). */
function typesOf(schema: unknown): string[] {
  const t = (schema as Schema | undefined)?.type;
  return typeof t === 'string' ? [t] : Array.isArray(t) ? t.filter((x): x is string => typeof x === 'string') : [];
}

/**
 * Reads one URL text as the scalar type `schema` names, when it is that type's JSON text; otherwise
 * (and for a string-typed or untyped schema) the text itself.
 */
function readScalar(schema: unknown, text: unknown): unknown {
  if (typeof text !== 'string') return text;
  const types = typesOf(schema);
  if (types.includes('string') || types.length === 0) return text;
  if (types.includes('integer') && INTEGER.test(text)) return Number(text);
  if (types.includes('number') && NUMBER.test(text)) return Number(text);
  if (types.includes('boolean') && (text === 'true' || text === 'false')) return text === 'true';
  return text;
}

/**
 * The reader of one text part (`params`, `querystring`, `headers`) of a route: replaces, in place, each
 * property typed integer / number / boolean (or an array of them) by the value its text spells
 * (module comment); undefined when the schema types no property. Properties without a `type` of
 * their own (`$ref`, `anyOf`) are left as text.
 */
export function readUrlValues(schema: unknown): ((data: unknown) => void) | undefined {
  const properties = Object.entries((schema as Schema | undefined)?.properties ?? {});
  const read = properties.filter(([, s]) => typesOf(s).some((t) => t === 'integer' || t === 'number' || t === 'boolean' || t === 'array'));
  if (read.length === 0) return undefined;
  return (data) => {
    if (data === null || typeof data !== 'object') return;
    const values = data as Record<string, unknown>;
    for (const [name, s] of read) {
      if (!Object.hasOwn(values, name)) continue;
      const value = values[name];
      if (typesOf(s).includes('array')) {
        const items = (s as Schema).items;
        values[name] = (Array.isArray(value) ? value : [value]).map((v) => readScalar(items, v));
      } else {
        values[name] = readScalar(s, value);
      }
    }
  };
}

/** The validator Fastify calls for a text part: reads the values (readUrlValues), then validates. */
function readingText(route: RouteDefinition, validate: ValidateFunction): ValidateFunction {
  if (!TEXT_PARTS.has(route.httpPart)) return validate;
  const read = readUrlValues(route.schema);
  if (!read) return validate;
  const reading: ValidateFunction = (data, ctx) => {
    read(data);
    const result = ctx === undefined ? validate(data) : validate(data, ctx);
    reading.errors = validate.errors;
    return result;
  };
  reading.schemaEnv = validate.schemaEnv;
  return reading;
}

/**
 * The strict validator compiler of a scope (`scope.setValidatorCompiler(strictValidators(...))`):
 * Fastify's Ajv compiler with {@link STRICT_AJV_OPTIONS} and the URL reading of the module comment,
 * each route part compiled on its first request (src/http/lazy-compilers.ts; shared through
 * `shared` like the default validators). `externalSchemas` answers the scope's shared schemas
 * (`scope.getSchemas()`); it is read at the first request, when every route file has added its
 * components.
 */
export function strictValidators(shared: CompiledSchemas | undefined, externalSchemas: () => Record<string, unknown>): RouteCompiler {
  const pool = shared?.validatorPool ?? AjvCompiler();
  return compilingOnFirstUse(shared, pool, externalSchemas, STRICT_OPTIONS, readingText);
}
