/**
 * The accept step shared by 4.3 and 4.4 (docs/decisions.md#3-outcomes-of-the-four-operations): a new batch id, the answer that reports it,
 * and one commit of the batch, its job and (with an Idempotency-Key) that answer's record, through the
 * service's BatchAcceptor. Resolves to the answer once all of it is committed.
 */
import { acceptBatch, newBatchId, type AcceptInput } from '../../domain/batches.ts';
import { answerRecord, type OperationContext } from '../public-operation.ts';

export async function acceptSend<A>(
  ctx: OperationContext<unknown>, input: Omit<AcceptInput, 'batchId' | 'companyId'>, answer: (batchId: string) => A,
): Promise<A> {
  const batchId = newBatchId();
  const result = answer(batchId);
  await acceptBatch(ctx.deps.acceptor, { ...input, batchId, companyId: ctx.auth.companyId }, { idempotency: answerRecord(ctx.idempotencyKey, result) });
  return result;
}
