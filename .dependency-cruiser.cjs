/**
 * The import rules of src/ (docs/architecture.md, "Who owns what"), checked by dependency-cruiser in
 * `npm test` (test/api/architecture.test.ts; by hand: `npx depcruise src`).
 *
 * - SQL lives in src/db: `kysely` (its `sql` tag, query builder and types) is imported only there and in
 *   the console's read models (src/console/queries).
 * - The domain knows no transport and no provider: src/domain imports nothing from src/queue, src/http,
 *   src/console or src/providers (what it needs of them is handed in from src/service.ts).
 * - The database drivers' internals stay in src/db: the modules that lean on them
 *   (src/db/driver-tricks.ts, prepared.ts, pglite-dialect.ts; the job queue in src/queue also calls
 *   the pg-boss tricks among them), the driver packages pg and
 *   @electric-sql/pglite (and pg's own pg-pool, pg-protocol, pg-cursor), and any path inside a driver
 *   package other than its main entry (`pg-boss/dist/plans.js`). pg-boss's main entry is the job
 *   queue's: src/db and src/queue only.
 *
 * EXCEPTIONS lists, by rule, files allowed to break it while they are being moved (none today).
 * test/api/architecture.test.ts cruises once more with every exception removed and requires each
 * excepted file to be reported: an exception that is no longer needed fails the test, and so does
 * removing one that is; its fixture (test/fixtures/architecture) shows a file reported without its
 * exception and not reported with it.
 *
 * Type-only imports count (`tsPreCompilationDeps`); TypeScript is read with swc (@swc/core).
 */

/** Repository paths of files allowed to break a rule for now, by rule name. */
const EXCEPTIONS = {
  'kysely-only-in-db': [],
  'domain-knows-no-transport-or-provider': [],
  'driver-tricks-only-in-db': [],
};

/** A regular expression matching exactly the repository paths `files`. */
function exactly(files) {
  return files.map((f) => `^${f.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`);
}

/** `npm` package folders (resolved paths contain `node_modules/<name>/`). */
function pkg(names) {
  return `(^|/)node_modules/(${names.map((n) => n.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')).join('|')})/`;
}

/** The rules; `exceptions` replaces EXCEPTIONS (the test passes `{}` to see every excepted file reported). */
function rules(exceptions = EXCEPTIONS) {
  const except = (name) => exactly(exceptions[name] ?? []);
  return [
    {
      name: 'kysely-only-in-db',
      comment: 'SQL lives in src/db (one statement per function) and in the console read models (src/console/queries): kysely, its sql tag and its types are imported nowhere else.',
      severity: 'error',
      from: { path: '^src/', pathNot: ['^src/db/', '^src/console/queries/', ...except('kysely-only-in-db')] },
      to: { path: pkg(['kysely']) },
    },
    {
      name: 'domain-knows-no-transport-or-provider',
      comment: 'src/domain imports nothing from src/queue, src/http, src/console or src/providers: what it needs is handed in from src/service.ts.',
      severity: 'error',
      from: { path: '^src/domain/', pathNot: except('domain-knows-no-transport-or-provider') },
      to: { path: '^src/(queue|http|console|providers)/' },
    },
    {
      name: 'driver-tricks-only-in-db',
      comment: "The modules that use the drivers' internals (db/driver-tricks.ts, prepared.ts, pglite-dialect.ts) are imported only by src/db and by the job queue (src/queue), which is pg-boss's other side: its queue-cache warm-up, due-queue wake-ups and poll interval are tricks on pg-boss's internals.",
      severity: 'error',
      from: { path: '^src/', pathNot: ['^src/(db|queue)/', ...except('driver-tricks-only-in-db')] },
      to: { path: '^src/db/(driver-tricks|prepared|pglite-dialect)\\.ts$' },
    },
    {
      name: 'driver-packages-only-in-db',
      comment: 'node-postgres and PGlite are opened and used only in src/db.',
      severity: 'error',
      from: { path: '^src/', pathNot: ['^src/db/', ...except('driver-packages-only-in-db')] },
      to: { path: pkg(['pg', 'pg-pool', 'pg-protocol', 'pg-cursor', '@electric-sql/pglite']) },
    },
    {
      name: 'pg-boss-only-in-db-and-queue',
      comment: 'pg-boss is the job queue: only src/queue (and src/db) import it; the domain gets a JobQueue handed in.',
      severity: 'error',
      from: { path: '^src/', pathNot: ['^src/(db|queue)/', ...except('pg-boss-only-in-db-and-queue')] },
      to: { path: pkg(['pg-boss']) },
    },
    {
      name: 'no-driver-internals-outside-db',
      comment: "Outside src/db a driver package is imported by its main entry only, never by a path inside it (pg-boss/dist/plans.js and the like).",
      severity: 'error',
      from: { path: '^src/', pathNot: ['^src/db/', ...except('no-driver-internals-outside-db')] },
      to: {
        path: pkg(['pg', 'pg-boss', '@electric-sql/pglite']),
        pathNot: ['(^|/)node_modules/pg/lib/index\\.js$', '(^|/)node_modules/pg/esm/index\\.mjs$', '(^|/)node_modules/pg-boss/dist/index\\.js$', '(^|/)node_modules/@electric-sql/pglite/dist/index\\.c?js$'],
      },
    },
  ];
}

module.exports = {
  forbidden: rules(),
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    parser: 'swc',
  },
};
// For test/api/architecture.test.ts; not enumerable, so dependency-cruiser's CLI neither validates nor clones them.
Object.defineProperty(module.exports, 'EXCEPTIONS', { value: EXCEPTIONS, enumerable: false });
Object.defineProperty(module.exports, 'rules', { value: rules, enumerable: false });
