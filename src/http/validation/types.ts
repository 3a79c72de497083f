/**
 * Declarative schema builders for request models, in the spirit of Pydantic field types
 * (docs/decisions.md#2-request-models is written with them). A schema is plain frozen data; its
 * semantics live in validate.ts, its JSON Schema in jsonschema.ts. The phantom `__out`
 * property carries the validated TypeScript type: `Out<typeof schema>`.
 *
 *   str({ minLength, maxLength, pattern })  str, lengths in code points, Rust-regex pattern
 *   int()                                   int (number, or bigint beyond 2^53)
 *   bool()                                  bool
 *   literal(['a', 'b'])                     Literal['a', 'b']
 *   nullable(t)                             t | None
 *   list(t, { minLength, maxLength })       list[t]
 *   dictAny()                               dict[str, Any]
 *   model('Name', { field: t, other: withDefault(t, value) })   a BaseModel
 */

import { literalExpected } from './errors.ts';
import { compileModel, type FastValidator } from './fast.ts';
import { rustPattern } from './pattern.ts';
import type { PlainObject } from './values.ts';

/** A compiled `pattern` constraint: `source` as written (shown in errors), `regex` for JS. */
export interface StrPattern {
  readonly source: string;
  readonly regex: RegExp;
}

export interface StrType {
  readonly kind: 'str';
  readonly minLength: number | undefined;
  readonly maxLength: number | undefined;
  readonly pattern: StrPattern | undefined;
  readonly __out?: string;
}

export interface IntType {
  readonly kind: 'int';
  readonly __out?: number | bigint;
}

export interface BoolType {
  readonly kind: 'bool';
  readonly __out?: boolean;
}

export interface LiteralType<V extends string = string> {
  readonly kind: 'literal';
  readonly values: ReadonlySet<string>;
  readonly list: readonly V[];
  /** Pydantic's `expected` text, e.g. `'add' or 'delete'`. */
  readonly expected: string;
  readonly __out?: V;
}

export interface NullableType<T extends AnyType> {
  readonly kind: 'nullable';
  readonly inner: T;
  readonly __out?: Out<T> | null;
}

export interface ListType<T extends AnyType> {
  readonly kind: 'list';
  readonly item: T;
  readonly minLength: number | undefined;
  readonly maxLength: number | undefined;
  readonly __out?: Out<T>[];
}

export interface DictAnyType {
  readonly kind: 'dict';
  readonly __out?: PlainObject;
}

/** One model field, in declaration order. */
export interface FieldSpec {
  readonly name: string;
  readonly type: AnyType;
  readonly required: boolean;
  /** Used when the key is absent and `required` is false (immutable values only). */
  readonly default: unknown;
}

/** A model (Pydantic BaseModel): validates a JSON object into `T`. */
export interface Model<T = unknown> {
  readonly kind: 'model';
  readonly name: string;
  readonly fields: readonly FieldSpec[];
  /** Builds the output object from field values in field order (one fixed object shape). */
  readonly build: (values: readonly unknown[]) => T;
  /** The compiled fast-path validator over `JSON.parse` output (fast.ts): a `T` or DECLINE. */
  readonly fast: FastValidator;
  readonly __out?: T;
}

/** Any schema (the `any` arguments stop the type-level recursion; values are checked by the builders). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyType = StrType | IntType | BoolType | LiteralType | NullableType<any> | ListType<any> | DictAnyType | Model<any>;

/** The validated TypeScript type of a schema. */
export type Out<T> = T extends { readonly __out?: infer O } ? O : never;

/** A field with a default value (`name: T = value`). */
export interface Defaulted<T extends AnyType> {
  readonly kind: 'default';
  readonly type: T;
  readonly value: Out<T>;
}

type FieldOut<F> = F extends Defaulted<infer T> ? Out<T> : Out<F>;

/** `str` with optional constraints (code points; `pattern` in Rust-regex syntax). */
export function str(opts: { minLength?: number; maxLength?: number; pattern?: string } = {}): StrType {
  const pattern = opts.pattern === undefined ? undefined : { source: opts.pattern, regex: rustPattern(opts.pattern) };
  return Object.freeze({ kind: 'str', minLength: opts.minLength, maxLength: opts.maxLength, pattern });
}

/** `int` (lax: numeric strings, integral floats, booleans). */
export function int(): IntType {
  return Object.freeze({ kind: 'int' });
}

/** `bool` (lax: 0/1 and the usual words). */
export function bool(): BoolType {
  return Object.freeze({ kind: 'bool' });
}

/** `Literal[...]` of strings. */
export function literal<const V extends string>(values: readonly V[]): LiteralType<V> {
  return Object.freeze({ kind: 'literal', values: new Set<string>(values), list: values, expected: literalExpected(values) });
}

/** `T | None`. */
export function nullable<T extends AnyType>(inner: T): NullableType<T> {
  return Object.freeze({ kind: 'nullable', inner });
}

/** `list[T]` with optional item-count bounds. */
export function list<T extends AnyType>(item: T, opts: { minLength?: number; maxLength?: number } = {}): ListType<T> {
  return Object.freeze({ kind: 'list', item, minLength: opts.minLength, maxLength: opts.maxLength });
}

/** `dict[str, Any]`: any JSON object, handed over as a null-prototype plain object. */
export function dictAny(): DictAnyType {
  return Object.freeze({ kind: 'dict' });
}

/** A field with a default: `name: T = value`. */
export function withDefault<T extends AnyType>(type: T, value: Out<T>): Defaulted<T> {
  return Object.freeze({ kind: 'default', type, value });
}

/** A model; field order (for errors and JSON Schema) is the order of `fields`. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function model<F extends Record<string, AnyType | Defaulted<any>>>(name: string, fields: F): Model<{ [K in keyof F]: FieldOut<F[K]> }> {
  const specs: FieldSpec[] = [];
  for (const [fieldName, f] of Object.entries(fields)) {
    if (/^(0|[1-9][0-9]*)$/.test(fieldName) || fieldName === '__proto__') throw new Error(`model ${name}: unsupported field name ${fieldName}`);
    specs.push(
      f.kind === 'default'
        ? Object.freeze({ name: fieldName, type: f.type, required: false, default: f.value })
        : Object.freeze({ name: fieldName, type: f, required: true, default: undefined }),
    );
  }
  const names = specs.map((f) => f.name);
  // A constructor gives every output object of this model the same hidden class (fast stores);
  // its prototype is Object.prototype, so outputs are ordinary plain objects.
  const Output = function (this: Record<string, unknown>, values: readonly unknown[]) {
    for (let i = 0; i < names.length; i++) this[names[i]] = values[i];
  } as unknown as new (values: readonly unknown[]) => { [K in keyof F]: FieldOut<F[K]> };
  Output.prototype = Object.prototype;
  const build = (values: readonly unknown[]) => new Output(values);
  return Object.freeze({ kind: 'model', name, fields: Object.freeze(specs), build, fast: compileModel(specs) });
}
