/**
 * OpenAPI 3.1 JSON Schemas of request models, shaped like FastAPI 0.142 / Pydantic 2.13
 * generate them (components under `#/components/schemas/`, nested models by `$ref`,
 * titles from field names, key order as FastAPI writes it). Checked against the oracle's
 * /openapi.json in test/validation/jsonschema.test.ts.
 */

import type { AnyType, Model } from './types.ts';

/** Pydantic's default title for a field: `first_name` -> `First Name`, `url2` -> `Url2`. */
export function fieldTitle(name: string): string {
  let out = '';
  let prevCased = false;
  for (const ch of name) {
    const cased = ch.toLowerCase() !== ch.toUpperCase();
    out += cased ? (prevCased ? ch.toLowerCase() : ch.toUpperCase()) : ch;
    prevCased = cased;
  }
  return out.replaceAll('_', ' ');
}

function typeSchema(t: AnyType): Record<string, unknown> {
  switch (t.kind) {
    case 'str': {
      const s: Record<string, unknown> = { type: 'string' };
      if (t.maxLength !== undefined) s.maxLength = t.maxLength;
      if (t.minLength !== undefined) s.minLength = t.minLength;
      if (t.pattern !== undefined) s.pattern = t.pattern.source;
      return s;
    }
    case 'int':
      return { type: 'integer' };
    case 'bool':
      return { type: 'boolean' };
    case 'literal':
      return { type: 'string', enum: [...t.list] };
    case 'nullable':
      return { anyOf: [typeSchema(t.inner), { type: 'null' }] };
    case 'list': {
      const s: Record<string, unknown> = { items: typeSchema(t.item), type: 'array' };
      if (t.maxLength !== undefined) s.maxItems = t.maxLength;
      if (t.minLength !== undefined) s.minItems = t.minLength;
      return s;
    }
    case 'dict':
      return { additionalProperties: true, type: 'object' };
    case 'model':
      return { $ref: `#/components/schemas/${t.name}` };
  }
}

/** The component schema of one model (nested models as `$ref`). */
export function jsonSchemaOf(model: Model<unknown>): object {
  const properties: Record<string, unknown> = {};
  const required: string[] = [];
  for (const f of model.fields) {
    const s = typeSchema(f.type);
    s.title = fieldTitle(f.name);
    if (f.required) required.push(f.name);
    else if (f.default !== null && f.default !== undefined) s.default = f.default;
    properties[f.name] = s;
  }
  const schema: Record<string, unknown> = { properties, type: 'object' };
  if (required.length > 0) schema.required = required;
  schema.title = model.name;
  return schema;
}

/** `components.schemas` for the given models and every model nested in them, by name. */
export function jsonSchemaComponents(models: readonly Model<unknown>[]): Record<string, object> {
  const found = new Map<string, Model<unknown>>();
  const visit = (t: AnyType): void => {
    if (t.kind === 'model') {
      if (found.has(t.name)) return;
      found.set(t.name, t);
      for (const f of t.fields) visit(f.type);
    } else if (t.kind === 'nullable') visit(t.inner);
    else if (t.kind === 'list') visit(t.item);
  };
  models.forEach(visit);
  const out: Record<string, object> = {};
  for (const name of [...found.keys()].sort()) out[name] = jsonSchemaOf(found.get(name) as Model<unknown>);
  return out;
}

/** FastAPI's `HTTPValidationError` and `ValidationError` component schemas. */
export const VALIDATION_ERROR_SCHEMAS: Readonly<Record<string, object>> = {
  HTTPValidationError: {
    properties: { detail: { items: { $ref: '#/components/schemas/ValidationError' }, type: 'array', title: 'Detail' } },
    type: 'object',
    title: 'HTTPValidationError',
  },
  ValidationError: {
    properties: {
      loc: { items: { anyOf: [{ type: 'string' }, { type: 'integer' }] }, type: 'array', title: 'Location' },
      msg: { type: 'string', title: 'Message' },
      type: { type: 'string', title: 'Error Type' },
      input: { title: 'Input' },
      ctx: { type: 'object', title: 'Context' },
    },
    type: 'object',
    required: ['loc', 'msg', 'type'],
    title: 'ValidationError',
  },
};
