/**
 * A PostgreSQL database of a test file's own, next to TEST_DATABASE_URL's, dropped at the end. For
 * tests that dump the whole database, or wait for the background queue (which, in the shared test
 * database, may hold a backlog other test files left), or write a lot (the fuzz suite).
 */
import pg from 'pg';

export interface FreshDatabase {
  /** Connection URL of the new database (TEST_DATABASE_URL itself when it could not be created). */
  url: string;
  /** Whether `url` is a database created for this test (false: the shared one). */
  own: boolean;
  /** Drops the database (closing what is still connected to it). */
  drop(): Promise<void>;
}

/** Creates an empty database on the server of `baseUrl`; falls back to `baseUrl` without CREATEDB rights. */
export async function freshDatabase(baseUrl: string, label: string): Promise<FreshDatabase> {
  const name = `cms_${label}_${process.pid}_${Date.now()}`.replace(/[^a-z0-9_]/gi, '_').toLowerCase();
  const admin = new pg.Client({ connectionString: baseUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE "${name}"`);
  } catch {
    return { url: baseUrl, own: false, async drop() {} };
  } finally {
    await admin.end();
  }
  const u = new URL(baseUrl);
  u.pathname = `/${name}`;
  return {
    url: u.toString(),
    own: true,
    async drop() {
      const c = new pg.Client({ connectionString: baseUrl });
      await c.connect();
      try {
        await c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      } finally {
        await c.end();
      }
    },
  };
}
