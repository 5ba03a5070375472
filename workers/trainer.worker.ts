/// <reference lib="webworker" />
/**
 * The trainer worker: owns tfjs and (with issue 5) the training loop. The page
 * talks to it only through the messages of `protocol.ts`.
 */
import { probeDevice } from './deviceProbe';
import { checkNumerics } from './numericsCheck';
import type { WorkerRequest, WorkerResponse } from './protocol';

const scope = self as unknown as DedicatedWorkerGlobalScope;

function reply(msg: WorkerResponse): void {
  scope.postMessage(msg);
}

async function handle(req: WorkerRequest): Promise<void> {
  switch (req.type) {
    case 'probe-device':
      reply({ id: req.id, type: 'device', report: await probeDevice() });
      return;
    case 'check-numerics':
      reply({ id: req.id, type: 'numerics', report: await checkNumerics(req.backend) });
      return;
    case 'start':
    case 'pause':
    case 'resume':
    case 'step':
    case 'stop':
      throw new Error(`"${req.type}": training in the worker is being wired (issue 5)`);
    default: {
      const unknown: never = req;
      throw new Error(`unknown request type ${String((unknown as { type?: string }).type)}`);
    }
  }
}

scope.onmessage = (ev: MessageEvent<WorkerRequest>) => {
  const req = ev.data;
  handle(req).catch((e: unknown) =>
    reply({ id: req?.id ?? -1, type: 'error', message: e instanceof Error ? e.message : String(e) }),
  );
};
