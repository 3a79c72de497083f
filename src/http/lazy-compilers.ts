/**
 * Fastify's default schema compilers, compiling each route's code on its first use instead of when
 * the route is registered (the `schemaController.compilersFactory` of src/http/app.ts).
 *
 * Fastify compiles, at start, a request validator (Ajv) for every schema part of every route and a
 * response serializer (fast-json-stringify) for every status. With the operator API's ~50 routes and
 * their shared components that was about 1 s of CPU for the serializers and 0.25 s for the
 * validators per start (a V8 CPU profile of a test server), for routes that many processes never
 * answer (an API process rarely serves the console's forms; a test file uses a few routes). The
 * compilers, their options and their output are Fastify's own; only the moment of compiling moves. A
 * schema error therefore shows on the route's first request instead of at start (the contract and
 * OpenAPI tests call every route).
 */
import { AjvCompiler, type BuildCompilerFromPool } from '@fastify/ajv-compiler';
import { SerializerSelector, type SerializerFactory } from '@fastify/fast-json-stringify-compiler';

/** An Ajv validate function as Fastify calls it: `(data, ctx?)`, errors on `.errors` after a false result. */
export interface ValidateFunction {
  (data: unknown, ctx?: object): unknown;
  errors?: unknown;
  schemaEnv?: unknown;
}

/** What Fastify passes a validator compiler (the package's types call it `schema`). */
export type RouteDefinition = { schema: unknown; method: string; url: string; httpPart: string };
export type RouteCompiler = (route: RouteDefinition) => ValidateFunction;

/**
 * Compiled validators and serializers shared by the apps one process builds (`ServiceOptions.compiledSchemas`,
 * passed by service.ts to src/http/app.ts). A service builds one app, so this only pays where a process
 * builds many (the test suite starts about a hundred servers in 16 processes; compiling the same
 * schemas again for each was about 10 s of its CPU). A compiled function is reused when its schema,
 * its route part (body, querystring ...; or status), the shared components and the
 * compiler options are the same JSON: what the compilers' output depends on. The Ajv instances and
 * serializer builders are shared too.
 */
export class CompiledSchemas {
  readonly validatorPool: BuildCompilerFromPool = AjvCompiler();
  readonly serializerSelector: SerializerFactory = SerializerSelector();
  readonly validators = new Map<string, ValidateFunction>();
  readonly serializers = new Map<string, (data: unknown) => string>();
}

/** The function kept in `cache` under `key()`, built by `build` on a miss; without a cache, a new one. */
function reuse<F>(cache: Map<string, F> | undefined, key: () => string, build: () => F): F {
  if (!cache) return build();
  const k = key();
  let fn = cache.get(k);
  if (fn === undefined) cache.set(k, fn = build());
  return fn;
}

/**
 * Fastify's default response-serializer factory, each route's serializer compiled on its first answer
 * with that status (and taken from `shared` when an app of the same process compiled it).
 */
export function lazySerializers(shared?: CompiledSchemas): SerializerFactory {
  const selector = shared?.serializerSelector ?? SerializerSelector();
  return (externalSchemas, options) => {
    let build: ReturnType<SerializerFactory> | undefined;
    let context: string | undefined;
    return (route) => {
      let serialize: ((data: unknown) => string) | undefined;
      const compile = () => reuse(
        shared?.serializers,
        () => `${context ??= JSON.stringify([externalSchemas, options])}\u0000${String(route.httpStatus)}\u0000${JSON.stringify(route.schema)}`,
        () => (build ??= selector(externalSchemas, options))(route),
      );
      return (data) => (serialize ??= compile())(data);
    };
  };
}

/**
 * Fastify's default request-validator factory (@fastify/ajv-compiler, Fastify's Ajv options), each
 * route part's validator compiled on its first request (and taken from `shared` when an app of the
 * same process compiled it). Call it once per app, as Fastify calls its
 * default: the Ajv instances are pooled by external schemas and options, so the encapsulated contexts
 * that share the components share one Ajv (a pool per factory call would make an Ajv, and add every
 * component to it, for each context). The Ajv instance itself is made on the first validation too. The
 * wrapper forwards Fastify's second argument (the parent data that lets Ajv coerce a root value;
 * Fastify passes it when the function has `schemaEnv`, as Ajv's have) and copies `errors` after each
 * call, as Fastify reads them from the function it was given.
 */
export function lazyValidators(shared?: CompiledSchemas): BuildCompilerFromPool {
  const pool = shared?.validatorPool ?? AjvCompiler();
  return (externalSchemas, options) => compilingOnFirstUse(shared, pool, () => externalSchemas, options) as unknown as ReturnType<BuildCompilerFromPool>;
}

/** What Fastify passes a validator factory as its second argument (`serverOptions.ajv`). */
export type AjvOptions = Parameters<BuildCompilerFromPool>[1];

/**
 * A route compiler whose validators are compiled on their first request, with the Ajv of `pool` for
 * the external schemas that `externalSchemas()` answers then (read once, at the first compile) and
 * `options`, and cached in `shared` under those and the route part. `prepare`, when given, turns the
 * compiled function of a route part into the one Fastify calls (src/http/strict-validators.ts reads
 * URL text with it). Shared by {@link lazyValidators} and the operator API's strict compiler.
 */
export function compilingOnFirstUse(
  shared: CompiledSchemas | undefined,
  pool: BuildCompilerFromPool,
  externalSchemas: () => Record<string, unknown>,
  options: AjvOptions,
  prepare?: (route: RouteDefinition, validate: ValidateFunction) => ValidateFunction,
): RouteCompiler {
  let build: RouteCompiler | undefined;
  let context: string | undefined;
  let schemas: Record<string, unknown> | undefined;
  const compile = (route: RouteDefinition): ValidateFunction => reuse(
    shared?.validators,
    () => `${context ??= JSON.stringify([schemas ??= externalSchemas(), options])}\u0000${route.httpPart}\u0000${JSON.stringify(route.schema)}`,
    () => {
      const compiled = (build ??= pool((schemas ??= externalSchemas()) as Parameters<BuildCompilerFromPool>[0], options) as unknown as RouteCompiler)(route);
      return prepare ? prepare(route, compiled) : compiled;
    },
  );
  return (route) => {
    let validate: ValidateFunction | undefined;
    const lazy: ValidateFunction = (data, ctx) => {
      validate ??= compile(route);
      const result = ctx === undefined ? validate(data) : validate(data, ctx);
      lazy.errors = validate.errors;
      return result;
    };
    lazy.schemaEnv = true;
    return lazy;
  };
}
