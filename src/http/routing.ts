/**
 * Starlette's routing answers (decisions.md §1 step 1): an unknown path is `404 {"detail":"Not Found"}`;
 * a known path with a wrong method is `405 {"detail":"Method Not Allowed"}` with an `Allow` header.
 * Fastify answers both with its not-found handler, so the app records each route's pattern and methods
 * and this module tells the two apart.
 */
export class RouteTable {
  readonly #routes = new Map<string, { re: RegExp; methods: Set<string> }>();

  /** Records a Fastify route (`/api/segments/:segment_id/contacts`) and its methods. */
  add(url: string, methods: string | string[]): void {
    let entry = this.#routes.get(url);
    if (!entry) {
      const pattern = url.split('/').map((part) => (part.startsWith(':') ? '[^/]+' : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))).join('/');
      entry = { re: new RegExp(`^${pattern}$`), methods: new Set() };
      this.#routes.set(url, entry);
    }
    for (const m of [methods].flat()) entry.methods.add(m.toUpperCase());
  }

  /** The methods allowed on a concrete path, or undefined when no route matches it. */
  allowed(path: string): string[] | undefined {
    const found = new Set<string>();
    for (const { re, methods } of this.#routes.values()) {
      if (re.test(path)) for (const m of methods) found.add(m);
    }
    return found.size ? [...found] : undefined;
  }
}
