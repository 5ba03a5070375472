/**
 * Test helper (tests only): a stand-in for the trainer worker's client (workers/client.ts) for
 * the state classes' tests. It records each request (without its id), answers it with `reply`
 * (an Error is thrown, as the client rejects; a promise lets a test hold the answer back), and
 * pushes events to the subscribers on demand.
 */
import type { TrainerClient } from '../../../workers/client';
import type { WorkerEvent, WorkerRequest, WorkerResponse } from '../../../workers/protocol';

export type SentRequest = Omit<WorkerRequest, 'id'>;

export function createFakeClient(
  reply: (req: SentRequest) => WorkerResponse | Error | Promise<WorkerResponse | Error>,
) {
  const sent: SentRequest[] = [];
  const listeners = new Set<(e: WorkerEvent) => void>();
  const client = {
    request: async (req: SentRequest) => {
      sent.push(req);
      const r = await reply(req);
      if (r instanceof Error) throw r;
      return r;
    },
    subscribe: (l: (e: WorkerEvent) => void) => {
      listeners.add(l);
      return () => listeners.delete(l);
    },
  } as unknown as TrainerClient;
  return { client, sent, push: (e: WorkerEvent) => listeners.forEach((l) => l(e)) };
}
