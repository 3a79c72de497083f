/**
 * The console's pages, enumerated from the running app's GET routes (so pages added later are visited
 * without editing a list), shared by the console benchmark (bench/console.ts) and the accessibility
 * tests (test/console/axe-pages.ts, used by axe.browser.test.ts and axe-signed-in.browser.test.ts).
 *
 * `consoleGetRoutes(app)` reads Fastify's route tree (`printRoutes`) and returns every GET route under
 * `/console` as a pattern (`/console/segments/:segmentId`). `consolePages(patterns, ids)` turns them
 * into paths to request: static assets, the catch-all, the `/console` redirects and downloads (`.csv`)
 * are left out; each `:param` is replaced from `ids`, looked up first as `<pattern>#<param>` (one
 * page's own id, e.g. `/console/segments/:segmentId/filter#segmentId`: a dynamic segment), then as
 * `<first path segment after /console>/<param>` (e.g. `automations/id`, `campaigns/id`), then as the
 * bare param name (`segmentId`). A pattern whose parameter has no id is returned in `missing`, so a caller can fail
 * and say which page it could not visit.
 */
import type { FastifyInstance } from 'fastify';

/** Every GET route pattern under /console, in the router's order. */
export function consoleGetRoutes(app: FastifyInstance): string[] {
  const tree = app.printRoutes({ commonPrefix: false, method: 'GET' } as Parameters<FastifyInstance['printRoutes']>[0]);
  const stack: string[] = [];
  const out: string[] = [];
  for (const line of tree.split('\n')) {
    const m = /^([│ ]*)[├└]── (.*?) \(([^)]*)\)\s*$/.exec(line);
    if (!m) continue;
    const depth = m[1].length / 4;
    stack.length = depth;
    stack.push(m[2]);
    const full = stack.join('').replace(/\/{2,}/g, '/');
    if (m[3].split(/,\s*/).includes('GET') && full.startsWith('/console')) out.push(full);
  }
  return [...new Set(out)];
}

/** True for a route that is not a page: assets, the catch-all, the home redirect, downloads. */
export function isNotAPage(pattern: string): boolean {
  return pattern.includes('/assets/') || pattern.endsWith('*') || pattern === '/console' || pattern === '/console/'
    || /\.(csv|json|txt)$/.test(pattern) || pattern === '/console/logout';
}

/** The paths to visit for `patterns` with the ids of real rows (see the module comment). */
export function consolePages(patterns: string[], ids: Record<string, string>): { pages: string[]; missing: string[] } {
  const pages: string[] = [];
  const missing: string[] = [];
  for (const pattern of patterns) {
    if (isNotAPage(pattern)) continue;
    const section = pattern.split('/')[2] ?? '';
    let ok = true;
    const path = pattern.replace(/:([A-Za-z_][A-Za-z0-9_]*)/g, (_, name: string) => {
      const id = ids[`${pattern}#${name}`] ?? ids[`${section}/${name}`] ?? ids[name];
      if (id === undefined) ok = false;
      return encodeURIComponent(id ?? '');
    });
    if (ok) pages.push(path);
    else missing.push(pattern);
  }
  return { pages, missing };
}
