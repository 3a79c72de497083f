/**
 * Statement groups: work handed in during one turn of the event loop, and while earlier
 * groups are still at the database, is passed together to one `run` call, so that one statement or one
 * transaction serves many requests. At most `maxGroup` items a group and `maxInFlight` groups at once.
 * Used by the group commit of accepted sends (db/accept-store.ts) and by the grouped rate-limit
 * decisions on PostgreSQL (http/rate-limit-pg.ts). `run` settles each item itself; a rejection of `run`
 * is the caller's bug, not retried here.
 */
export class StatementGroups<T> {
  readonly #run: (group: T[]) => Promise<void>;
  readonly #maxGroup: number;
  readonly #maxInFlight: number;
  #queue: T[] = [];
  #inFlight = 0;
  #scheduled = false;

  constructor(run: (group: T[]) => Promise<void>, opts: { maxGroup: number; maxInFlight: number }) {
    this.#run = run;
    this.#maxGroup = opts.maxGroup;
    this.#maxInFlight = opts.maxInFlight;
  }

  /** Queues `item` for the next group. */
  add(item: T): void {
    this.#queue.push(item);
    this.#schedule();
  }

  #schedule(): void {
    if (this.#scheduled || this.#inFlight >= this.#maxInFlight || this.#queue.length === 0) return;
    this.#scheduled = true;
    // Let the requests of this turn of the event loop join the group.
    setImmediate(() => {
      this.#scheduled = false;
      while (this.#inFlight < this.#maxInFlight && this.#queue.length > 0) {
        const group = this.#queue.splice(0, this.#maxGroup);
        this.#inFlight++;
        void this.#run(group).finally(() => {
          this.#inFlight--;
          this.#schedule();
        });
      }
    });
  }
}
