/**
 * The fuzz suite's view of the service's own OpenAPI document (`GET /openapi.json` of the running
 * server): the four public operations with their request schemas (every `$ref` resolved) and a
 * compiled JSON Schema validator (Ajv, draft 2020-12 as OpenAPI 3.1 uses) for each documented
 * response status.
 */
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';

/** A JSON Schema object as it appears in the document. */
export type Schema = { [key: string]: any };

/** One public operation as the document describes it. */
export interface DocumentedOperation {
  operationId: string;
  /** OpenAPI path template, e.g. `/api/segments/{segment_id}/contacts`. */
  path: string;
  /** Request body schema with every `$ref` replaced by its target. */
  body: Schema;
  /** Path parameters with their schemas. */
  pathParams: { name: string; schema: Schema }[];
  /** Header parameters (e.g. the optional `idempotency-key`). */
  headerParams: { name: string; schema: Schema; required: boolean }[];
  /** Validators of the response bodies, by status code ("200", "422", ...). */
  responses: Map<string, ValidateFunction>;
}

export interface PublicApiDocument {
  raw: Schema;
  operations: Map<string, DocumentedOperation>;
  /** `$ref` targets the document names but does not define (each filled from `fallbacks`). */
  danglingRefs: string[];
}

/**
 * Replaces every `{$ref: '#/components/schemas/X'}` below `schema` by a copy of X. Targets missing
 * from the document are taken from `fallbacks` (and recorded in `dangling`), so that a document bug
 * is reported by its own test instead of stopping the whole fuzz run.
 */
export function resolveRefs(schema: unknown, components: Record<string, Schema>, fallbacks: Record<string, Schema>, dangling: Set<string>, seen: string[] = []): any {
  if (Array.isArray(schema)) return schema.map((s) => resolveRefs(s, components, fallbacks, dangling, seen));
  if (schema === null || typeof schema !== 'object') return schema;
  const obj = schema as Schema;
  if (typeof obj.$ref === 'string') {
    const ref = obj.$ref as string;
    const name = ref.replace(/^#\/components\/schemas\//, '');
    if (seen.includes(name)) throw new Error(`recursive $ref ${ref} is not supported by the fuzz generator`);
    let target = components[name];
    if (target === undefined) {
      dangling.add(ref);
      target = fallbacks[name];
      if (target === undefined) throw new Error(`$ref ${ref} is defined neither in the document nor in the fallbacks`);
    }
    return resolveRefs(target, components, fallbacks, dangling, [...seen, name]);
  }
  const out: Schema = {};
  for (const [k, v] of Object.entries(obj)) out[k] = resolveRefs(v, components, fallbacks, dangling, seen);
  return out;
}

/** Every `$ref` string anywhere in a document. */
export function collectRefs(doc: unknown, out: string[] = []): string[] {
  if (Array.isArray(doc)) doc.forEach((d) => collectRefs(d, out));
  else if (doc !== null && typeof doc === 'object') {
    for (const [k, v] of Object.entries(doc)) {
      if (k === '$ref' && typeof v === 'string') out.push(v);
      else collectRefs(v, out);
    }
  }
  return out;
}

/**
 * Fetches `/openapi.json` from the server at `baseUrl` and prepares the public operations (paths under
 * `/api/`). `fallbacks` supplies component schemas the document references without defining.
 */
export async function loadPublicApi(baseUrl: string, fallbacks: Record<string, Schema> = {}): Promise<PublicApiDocument> {
  const res = await fetch(baseUrl + '/openapi.json');
  if (res.status !== 200) throw new Error(`/openapi.json answered ${res.status}`);
  const raw = (await res.json()) as Schema;
  const components: Record<string, Schema> = raw.components?.schemas ?? {};
  const dangling = new Set<string>();
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
  const operations = new Map<string, DocumentedOperation>();
  for (const [path, item] of Object.entries(raw.paths as Record<string, Schema>)) {
    if (!path.startsWith('/api/') || !item.post) continue;
    const op = item.post as Schema;
    const params = (op.parameters ?? []) as Schema[];
    const responses = new Map<string, ValidateFunction>();
    for (const [status, response] of Object.entries(op.responses as Record<string, Schema>)) {
      const schema = response.content?.['application/json']?.schema;
      if (schema) responses.set(status, ajv.compile(resolveRefs(schema, components, fallbacks, dangling)));
    }
    operations.set(op.operationId, {
      operationId: op.operationId,
      path,
      body: resolveRefs(op.requestBody.content['application/json'].schema, components, fallbacks, dangling),
      pathParams: params.filter((p) => p.in === 'path').map((p) => ({ name: p.name, schema: resolveRefs(p.schema, components, fallbacks, dangling) })),
      headerParams: params.filter((p) => p.in === 'header').map((p) => ({ name: String(p.name).toLowerCase(), schema: p.schema, required: p.required === true })),
      responses,
    });
  }
  return { raw, operations, danglingRefs: [...dangling].sort() };
}
