/// <reference lib="webworker" />
/**
 * The trainer worker: owns tfjs and the training loop (trainingSession.ts). The page
 * talks to it only through the messages of `protocol.ts`.
 */
import { probeDevice } from './deviceProbe';
import { checkNumerics } from './numericsCheck';
import { BfclEvalSession } from './bfclEvalSession';
import { FtrlEvalSession } from './ftrlEvalSession';
import { TrainingSession } from './trainingSession';
import { setToolSandboxPort } from '../src/envs/sandbox/browserSandbox';
import { createBrowserSessionDeps } from './browserSession';
import type { WorkerInbound, WorkerRequest, WorkerResponse } from './protocol';

const scope = self as unknown as DedicatedWorkerGlobalScope;

function reply(msg: WorkerResponse): void {
  scope.postMessage(msg);
}

const session = new TrainingSession((event) => scope.postMessage(event), createBrowserSessionDeps());
// FTRL evaluation (the eval-ftrl request): one at a time, never beside a training run (one tfjs backend).
const ftrlEval = new FtrlEvalSession((event) => scope.postMessage(event));
// BFCL evaluation (the eval-bfcl request), likewise.
const bfclEval = new BfclEvalSession((event) => scope.postMessage(event));

async function handle(req: WorkerRequest): Promise<void> {
  switch (req.type) {
    case 'probe-device':
      reply({ id: req.id, type: 'device', report: await probeDevice() });
      return;
    case 'check-numerics':
      if (session.isActive)
        throw new Error(
          'a training run is in progress: stop it before checking numerics (both need the model backend)',
        );
      reply({ id: req.id, type: 'numerics', report: await checkNumerics(req.backend) });
      return;
    case 'start': {
      if (ftrlEval.isActive || bfclEval.isActive)
        throw new Error('an evaluation is running in this tab: wait for it or stop it before training');
      const started = await session.start(req.config, {
        resumeRunId: req.resumeRunId,
        maxSteps: req.maxSteps,
        modelFiles: req.modelFiles,
        taskFile: req.taskFile,
      });
      reply({ id: req.id, type: 'started', ...started });
      return;
    }
    case 'pause':
      session.pause();
      reply({ id: req.id, type: 'ok' });
      return;
    case 'resume':
      session.resume();
      reply({ id: req.id, type: 'ok' });
      return;
    case 'step':
      session.stepOnce();
      reply({ id: req.id, type: 'ok' });
      return;
    case 'stop':
      session.stop();
      reply({ id: req.id, type: 'ok' });
      return;
    case 'eval-ftrl': {
      if (session.isActive)
        throw new Error('a training run is in progress: stop it before evaluating (both need the model backend)');
      if (bfclEval.isActive) throw new Error('a BFCL evaluation is running: wait for it or stop it');
      const report = await ftrlEval.run({
        requestId: req.id,
        tasksText: req.tasksText,
        fileName: req.fileName,
        policy: req.policy,
        settings: req.settings,
      });
      reply({ id: req.id, type: 'ftrl-eval', report });
      return;
    }
    case 'eval-bfcl': {
      if (session.isActive)
        throw new Error('a training run is in progress: stop it before evaluating (both need the model backend)');
      if (ftrlEval.isActive) throw new Error('an FTRL evaluation is running: wait for it or stop it');
      const report = await bfclEval.run({
        requestId: req.id,
        data: req.data,
        sources: req.sources,
        policy: req.policy,
        settings: req.settings,
      });
      reply({ id: req.id, type: 'bfcl-eval', report });
      return;
    }
    case 'stop-eval':
      if (bfclEval.isActive) bfclEval.stop();
      else ftrlEval.stop();
      reply({ id: req.id, type: 'ok' });
      return;
    default: {
      const unknown: never = req;
      throw new Error(`unknown request type ${String((unknown as { type?: string }).type)}`);
    }
  }
}

// Anything that escapes a handler still reaches the console with its stack.
scope.addEventListener('unhandledrejection', (ev) =>
  console.error('PACT Lab trainer worker: unhandled rejection', ev.reason),
);

scope.onmessage = (ev: MessageEvent<WorkerInbound>) => {
  if (ev.data.type === 'tool-sandbox') {
    setToolSandboxPort(ev.data.port);
    return;
  }
  const req = ev.data;
  handle(req).catch((e: unknown) =>
    reply({ id: req?.id ?? -1, type: 'error', message: e instanceof Error ? e.message : String(e) }),
  );
};
