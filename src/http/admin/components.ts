/**
 * The operator API's OpenAPI building blocks: named component schemas, typed `$ref`s,
 * and the answers every admin route shares (401, 404, 409, 422), with their headers and examples.
 *
 * ## How to write an admin route (the pattern; `api-keys.ts` is the worked example)
 *
 * 1. Take the TypeBox provider: `const r = app.withTypeProvider<TypeBoxTypeProvider>()` and declare
 *    routes on `r`. Params, querystring and body are TypeBox schemas, so `request.params/query/body`
 *    are typed from them: no generic type arguments, no casts. Import `Type`, `Static` and `TSchema`
 *    from `typebox` and only the type `TypeBoxTypeProvider` from `@fastify/type-provider-typebox`: a
 *    value import of the provider loads TypeBox's compiler, value and format modules (about 300
 *    modules, 6 MB of RSS) that the service never uses (validation is Ajv's).
 * 2. A shape that an answer returns (or that several routes share) is a **component**:
 *    `export const Company = component('Company', Type.Object({...}), example)`. Register the file's
 *    components once with `addComponents(app, [Company, ...])` at the top of its register function
 *    (idempotent; @fastify/swagger then lists them under `components.schemas` by that name), and
 *    use them through `ref(Company)`: a `$ref` typed like the schema.
 * 3. `schema` of every route: `tags`, `operationId` (snake_case verb_noun, unique), `summary`,
 *    `params`/`querystring`/`body` (with `examples: [ ... ]` on the body: one realistic request),
 *    and `response` with EVERY status the route can answer, each built with a helper below:
 *    `ok(description, schema, example)` for 200/201/202, `noContent(description)` for 204,
 *    `notFound('Company not found')`, `conflict(...)`, `invalid(example item)` for 422 and
 *    `unauthorized` for 401 (every admin route answers it: spread `...adminErrors`). A route
 *    without a request body has no 422 unless its params or query can fail validation (they
 *    usually can: an id that is not an integer is 422).
 * 4. Error answers: 401/404/409 are `{"detail": "..."}` (`Detail`), throw `notFound(...)` /
 *    `new DomainError(409, ...)`. Every 422 is the list shape `{"detail":[{type, loc, msg}]}`
 *    (`AdminValidationError`): schema errors are formatted by the plugin; in a handler throw
 *    `invalidInput(loc, msg, type?)` (or a `DomainError(422, msg)`, which the plugin turns into one
 *    item with `loc: ["body"]`; prefer `invalidInput` with the field's loc).
 * 5. Answers are serialized with the documented schema (fast-json-stringify): a property missing
 *    from the schema is DROPPED from the answer, so list every property (`additionalProperties`
 *    for free-form objects such as a template's variables).
 * 6. Requests are validated strictly (src/http/strict-validators.ts, installed by the plugin for the
 *    whole scope): no type coercion (`5` is not the string `"5"`), `additionalProperties: false`
 *    refuses unknown properties instead of dropping them, path and query values are read only from
 *    their exact JSON text. A body in another media type is 415, which openapi-schemas.ts documents
 *    on every operation with a body; a body schema that admits null makes the body optional there.
 * 7. test/admin/openapi-admin.test.ts checks that every admin operation follows these rules and
 *    that real answers validate against their documented schemas; test/admin/strict-contract.test.ts
 *    sends every operation of the document wrong-typed bodies and parameters.
 */
import type { FastifyInstance } from 'fastify';
import { Type, type Static, type TSchema } from 'typebox';
import { AdminValidationError as ValidationFailure } from './errors.ts';

/** A schema registered as a named component (`$id` = its name in `components.schemas`), with its examples. */
export type Component<T extends TSchema = TSchema> = T & { $id: string; examples: Static<T>[] };

/**
 * Names `schema` as the component `name` and attaches one example (OpenAPI `examples`, checked by the
 * openapi-admin test). Register it with {@link addComponents}; refer to it with {@link ref}.
 */
export function component<T extends TSchema>(name: string, schema: T, example: Static<T>): Component<T> {
  return Object.assign(schema, { $id: name, title: name, examples: [example] }) as Component<T>;
}

/** The example of a component (for the examples of the answers that return it). */
export const exampleOf = <T extends TSchema>(c: Component<T>): Static<T> => c.examples[0];

/** A time as the API answers it (RFC 3339 UTC), null kept: `iso(row.created_at)`. */
export function iso(d: Date): string;
export function iso(d: Date | null): string | null;
export function iso(d: Date | null): string | null {
  return d === null ? null : d.toISOString();
}

/** A `$ref` to a registered component, typed as the component (for typed answers). */
export function ref<T extends TSchema>(schema: Component<T>, options: { description?: string } = {}) {
  return Type.Unsafe<Static<T>>({ $ref: schema.$id, ...options });
}

/**
 * Registers components on the admin scope (idempotent: a component already registered, e.g. by
 * another route file, is left alone). Shared components of this file are registered by the plugin.
 */
export function addComponents(app: FastifyInstance, components: Component[]): void {
  for (const c of components) if (app.getSchema(c.$id) === undefined) app.addSchema(c);
}

// ---------------------------------------------------------------------------------------------
// Shared components
// ---------------------------------------------------------------------------------------------

/** `{"detail": "..."}`: the body of 401, 404 and 409 answers. */
export const Detail = component('Detail', Type.Object({
  detail: Type.String({ description: 'what went wrong, for people' }),
}, { description: 'An error that is not about the request\'s fields' }), { detail: 'Company not found' });

/** One problem of a 422: where (`loc`: `body`/`path`/`query`, then the field path), what kind, message. */
export const AdminValidationErrorItem = component('AdminValidationErrorItem', Type.Object({
  type: Type.String({ description: "kind of problem: `missing`, `json_invalid`, `value_error`, `template_error`, or the JSON Schema keyword that failed (`type`, `maxLength`, `pattern`, `enum` ...)" }),
  loc: Type.Array(Type.Union([Type.String(), Type.Integer()]), { description: 'where: `body`, `path` or `query`, then the property names and array indexes' }),
  msg: Type.String({ description: 'the problem, for people' }),
  input: Type.Optional(Type.Unknown({ description: 'the value refused, when there is one' })),
}), { type: 'missing', loc: ['body', 'name'], msg: 'Field required' });

/** `{"detail": [item, ...]}`: the body of every 422 of the operator API. */
export const AdminValidationError = component('AdminValidationError', Type.Object({
  detail: Type.Array(ref(AdminValidationErrorItem), { minItems: 1 }),
}, { description: 'The request was refused before anything changed: one item per problem' }),
{ detail: [{ type: 'missing', loc: ['body', 'name'], msg: 'Field required' }] });

/** The components of this file; registered once by the admin plugin. */
export const sharedComponents: Component[] = [Detail, AdminValidationErrorItem, AdminValidationError];

// ---------------------------------------------------------------------------------------------
// Headers and answers
// ---------------------------------------------------------------------------------------------

/** Response headers of every answer. */
export const commonHeaders = {
  'x-request-id': { type: 'string', description: 'id of this request (the one sent in `x-request-id`, or a generated UUID); it is in every log line of the request', examples: ['3f1e4d2c-9a7b-4c1e-8f00-5b6a7c8d9e0f'] },
} as const;

type Headers = Record<string, { type: string; description: string; examples?: unknown[] }>;

/** A JSON answer: its description, body schema and one example (shown by /docs and checked by tests). */
export function ok<T extends TSchema>(description: string, schema: T, example: Static<T>, headers: Headers = {}) {
  return {
    description,
    headers: { ...commonHeaders, ...headers },
    content: { 'application/json': { schema, example } },
  };
}

/** A 204 answer: no body. */
export function noContent(description: string) {
  // Typed `undefined` so that `reply.code(204).send()` type-checks; documented as no content.
  return Type.Unsafe<undefined>({ type: 'null', description, headers: { ...commonHeaders } });
}

/** 401: no `Authorization: Bearer` header, or the wrong token. */
export const unauthorized = ok('No `Authorization: Bearer <ADMIN_TOKEN>` header (`Not authenticated`), or another token (`Invalid admin token`)',
  ref(Detail), { detail: 'Not authenticated' },
  { 'WWW-Authenticate': { type: 'string', description: 'always `Bearer`', examples: ['Bearer'] } });

/** 404 with the route's detail, e.g. `notFound('Company not found')` (an unknown id and another company's answer alike). */
export function notFound(example: string, description = `Not found: \`${example}\``) {
  return ok(description, ref(Detail), { detail: example });
}

/** 409 with the route's detail. */
export function conflict(description: string, example: string) {
  return ok(description, ref(Detail), { detail: example });
}

/** 422 in the admin list shape, with one realistic item for this route. */
export function invalid(example: Static<typeof AdminValidationErrorItem>, description = 'Invalid request (schema or a rule of the operation); nothing changed') {
  return ok(description, ref(AdminValidationError), { detail: [example] });
}

/** The answers every admin route has (spread into `response`). */
export const adminErrors = { 401: unauthorized } as const;

/** A 422 raised by a handler for one field: `invalidInput(['body', 'default_country'], 'not a supported region')`. */
export function invalidInput(loc: (string | number)[], msg: string, type = 'value_error', input?: unknown): ValidationFailure {
  return new ValidationFailure([{ type, loc, msg, ...(input === undefined ? {} : { input }) }]);
}

/**
 * An optional request body: the object, or JSON `null` (or no body at all). One schema with
 * `type: ["object", "null"]` (not anyOf), so a bad property is one 422 item, not three.
 */
export function objectOrNull<T extends TSchema>(schema: T) {
  return Type.Unsafe<Static<T> | null>({ ...schema, type: ['object', 'null'] });
}

/** A free-form JSON object (`Record<string, unknown>`), e.g. a contact's variables or an audit entry's details. */
export function freeObject(options: { description?: string; examples?: unknown[] } = {}) {
  return Type.Unsafe<Record<string, unknown>>({ type: 'object', additionalProperties: true, ...options });
}

// ---------------------------------------------------------------------------------------------
// Parameters
// ---------------------------------------------------------------------------------------------

/** An int4 row id path parameter (`/admin/companies/{company_id}`); an id out of range is 422. */
export function rowId(description: string, example = 42) {
  return Type.Integer({ minimum: 1, maximum: 2147483647, description, examples: [example] });
}

/** Path parameters `{ [name]: row id }`, typed (`request.params[name]` is a number). */
export function idParams<K extends string>(name: K, description = `${name.replace(/_id$/, '').replace(/_/g, ' ')} id`, example = 42) {
  return Type.Object({ [name]: rowId(description, example) } as { [P in K]: ReturnType<typeof rowId> });
}

/** The example instant of answers and requests (a `date-time`). */
/**
 * The content of a rendered message as a provider gets it (docs/operator-api.md, `rendered`), without
 * its ids: shared by the rendered message of a batch and the answer of a preview.
 */
export const renderedContent = {
  to: Type.String({ description: 'E.164' }),
  header: Type.Object({
    type: Type.String({ description: '`none`, `text`, `image` or `video`' }),
    text: Type.Optional(Type.String({ description: 'text: the header text' })),
    url: Type.Optional(Type.String({ description: 'image / video: the media URL' })),
  }),
  body: Type.String(),
  buttons: Type.Array(Type.Object({ text: Type.String(), url: Type.String() })),
  whatsapp: Type.Optional(Type.Object({
    name: Type.String(), language: Type.String(),
    header_parameters: Type.Array(Type.String()), body_parameters: Type.Array(Type.String()),
    button_parameters: Type.Array(Type.Union([Type.String(), Type.Null()])),
  }, { description: 'templates with a WhatsApp mapping: the Cloud API template parameters' })),
};

export const TIME_EXAMPLE = '2026-03-02T09:30:00.000Z';
