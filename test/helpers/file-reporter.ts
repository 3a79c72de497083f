/**
 * A node:test reporter for test/run.ts: one JSON line per test file of the process
 * (`{"file","ok","durationMs"}`), taken from the top-level suites that test/helpers/run-files.ts makes
 * (one per file, named after it). Everything else is left to the spec reporter.
 */
import type { TestEvent } from 'node:test/reporters';

export default async function* fileReporter(source: AsyncIterable<TestEvent>): AsyncGenerator<string> {
  for await (const event of source) {
    if ((event.type === 'test:pass' || event.type === 'test:fail') && event.data.nesting === 0) {
      yield JSON.stringify({ file: event.data.name, ok: event.type === 'test:pass', durationMs: event.data.details.duration_ms }) + '\n';
    }
  }
}
