/**
 * What the domain asks of the background job queue: enqueue a job inside the caller's transaction, so
 * that the job exists if and only if that transaction commits. The domain names only the jobs it starts
 * itself ({@link DomainJobs}); the queue (queue/boss.ts `jobQueue`) implements the interface, service.ts
 * builds it once and hands it over through AppDeps (`jobs`).
 */
import type { Tx } from '../db/database.ts';

/** The jobs the domain enqueues, by queue name, with their payloads. */
export interface DomainJobs {
  /** A stored CSV import of contacts (domain/contact-imports.ts), run in chunks by the worker. */
  'contacts-import': { import_id: number; company_id: number };
  /** A cancelled or resumed batch (domain/batch-control.ts), brought in line with its state by the worker. */
  'batch-control': { batch_id: string };
}

/** Enqueues jobs in the caller's transaction. */
export interface JobQueue {
  /** Adds one job `name` with `data`; it is stored (and runs) only if `trx` commits. */
  enqueue<N extends keyof DomainJobs>(trx: Tx, name: N, data: DomainJobs[N]): Promise<void>;
}
