/**
 * WhatsApp pacing end to end across processes, the second half: 110 recipients, 20 of them twice
 * (the check and why it is in two files: pacing-processes.ts).
 */
import { pacingAcrossProcesses } from './pacing-processes.ts';

pacingAcrossProcesses({ part: 'b', DISTINCT: 110, REPEATS: 20 });
