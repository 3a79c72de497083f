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
interface ValidateFunction {
  (data: unknown, ctx?: object): unknown;
  errors?: unknown;
  schemaEnv?: unknown;
}

/** What Fastify passes a validator compiler (the package's types call it `schema`). */
type RouteDefinition = { schema: unknown; method: string; url: string; httpPart: string };
type RouteCompiler = (route: RouteDefinition) => ValidateFunction;

/**
 * Fastify's default response-serializer factory, each route's serializer compiled on its first answer
 * with that status.
 */
export const lazySerializers: SerializerFactory = (externalSchemas, options) => {
  const build = SerializerSelector()(externalSchemas, options);
  return (route) => {
    let serialize: ReturnType<typeof build> | undefined;
    return (data) => (serialize ??= build(route))(data);
  };
};

/**
 * Fastify's default request-validator factory (@fastify/ajv-compiler, Fastify's Ajv options), each
 * route part's validator compiled on its first request. Call it once per app, as Fastify calls its
 * default: the Ajv instances are pooled by external schemas and options, so the encapsulated contexts
 * that share the components share one Ajv (a pool per factory call would make an Ajv, and add every
 * component to it, for each context). The Ajv instance itself is made on the first validation too. The
 * wrapper forwards Fastify's second argument (the parent data that lets Ajv coerce a root value;
 * Fastify passes it when the function has `schemaEnv`, as Ajv's have) and copies `errors` after each
 * call, as Fastify reads them from the function it was given.
 */
export function lazyValidators(): BuildCompilerFromPool {
  const pool = AjvCompiler();
  return (externalSchemas, options) => {
    let build: RouteCompiler | undefined;
    const compileOnFirstUse: RouteCompiler = (route) => {
      let validate: ValidateFunction | undefined;
      const lazy: ValidateFunction = (data, ctx) => {
        validate ??= (build ??= pool(externalSchemas, options) as unknown as RouteCompiler)(route);
        const result = ctx === undefined ? validate(data) : validate(data, ctx);
        lazy.errors = validate.errors;
        return result;
      };
      lazy.schemaEnv = true;
      return lazy;
    };
    return compileOnFirstUse as unknown as ReturnType<BuildCompilerFromPool>;
  };
}
