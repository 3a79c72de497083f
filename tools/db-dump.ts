/**
 * `npm run db:dump`: migrates a fresh in-memory embedded database and writes its schema to
 * src/db/schema.sql (src/db/schema-dump.ts). `--check` writes nothing and exits 1 when the file differs.
 */
import fs from 'node:fs';
import path from 'node:path';
import { openPglite } from '../src/db/database.ts';
import { migrate } from '../src/db/migrate.ts';
import { dumpSchema } from '../src/db/schema-dump.ts';

const file = path.join(import.meta.dirname, '../src/db/schema.sql');
const database = await openPglite('memory://schema-dump');
try {
  await migrate(database);
  const text = await dumpSchema(database.db);
  if (process.argv.includes('--check')) {
    const same = fs.existsSync(file) && fs.readFileSync(file, 'utf8') === text;
    console.log(same ? 'src/db/schema.sql is up to date' : 'src/db/schema.sql differs from the migrated schema: run npm run db:dump');
    process.exitCode = same ? 0 : 1;
  } else {
    fs.writeFileSync(file, text);
    console.log(`wrote ${path.relative(process.cwd(), file)} (${text.split('\n').length} lines)`);
  }
} finally {
  await database.close();
}
