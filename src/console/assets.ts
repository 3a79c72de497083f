/**
 * Static assets of the console, all served by the service itself (works with no internet):
 * `/console/assets/console.{css,js}`, the editor's live preview (`editor-preview.js`) and the server
 * modules it runs (`shared/*.js`, generated from src/domain/render.ts and friends by `npm run
 * gen:browser`) from `src/console/assets/`; `/console/assets/pico/*` from the @picocss/pico npm
 * package's `css/` directory; `/console/assets/liquid/liquid.browser.mjs`, liquidjs's browser ESM build,
 * from the installed liquidjs package (the version the server renders with). Cached for an hour.
 */
import path from 'node:path';
import { createRequire } from 'node:module';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance } from 'fastify';

const require = createRequire(import.meta.url);
const PICO_CSS_DIR = path.dirname(require.resolve('@picocss/pico/css/pico.min.css'));
const LIQUID_DIST_DIR = path.join(path.dirname(require.resolve('liquidjs/package.json')), 'dist');
const OWN_DIR = path.join(import.meta.dirname, 'assets');

/** Registers the asset directories under `/assets` of the console prefix. */
export async function registerAssets(scope: FastifyInstance): Promise<void> {
  const common = { maxAge: 3_600_000, index: false, dotfiles: 'deny' } as const;
  await scope.register(fastifyStatic, { ...common, root: OWN_DIR, prefix: '/assets/', wildcard: false });
  // Only the one stylesheet of the package is reachable.
  await scope.register(fastifyStatic, { ...common, root: PICO_CSS_DIR, prefix: '/assets/pico/', decorateReply: false, allowedPath: (p) => p === '/pico.min.css' });
  // Only liquidjs's browser ES module (the shared renderer imports it as ../liquid/liquid.browser.mjs).
  await scope.register(fastifyStatic, { ...common, root: LIQUID_DIST_DIR, prefix: '/assets/liquid/', decorateReply: false, allowedPath: (p) => p === '/liquid.browser.mjs' });
}
