/**
 * The page side of the worker protocol: request ids, one pending promise per
 * request, typed replies, and subscribers for the events a run pushes.
 */
import { connectToolSandbox } from '../src/envs/sandbox/browserSandbox';
import {
  isResponse,
  type ToolSandboxSetup,
  type WorkerEvent,
  type WorkerMessage,
  type WorkerRequest,
  type WorkerResponse,
} from './protocol';

type Pending = { resolve: (r: WorkerResponse) => void; reject: (e: Error) => void };
type DistributiveOmit<T, K extends keyof T> = T extends unknown ? Omit<T, K> : never;

export class TrainerClient {
  private readonly worker: Worker;
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private readonly listeners = new Set<(e: WorkerEvent) => void>();
  private readonly crashListeners = new Set<(message: string) => void>();

  constructor(worker?: Worker) {
    this.worker =
      worker ?? new Worker(new URL('./trainer.worker.ts', import.meta.url), { type: 'module', name: 'pact-trainer' });
    // The worker's tool code runs in the page's tool sandbox frame, which only a page can open.
    const port = connectToolSandbox();
    this.worker.postMessage({ type: 'tool-sandbox', port } satisfies ToolSandboxSetup, [port]);
    this.worker.onmessage = (ev: MessageEvent<WorkerMessage>) => {
      const msg = ev.data;
      if (!isResponse(msg)) {
        for (const l of this.listeners) l(msg);
        return;
      }
      const p = this.pending.get(msg.id);
      if (!p) return;
      this.pending.delete(msg.id);
      if (msg.type === 'error') p.reject(new Error(msg.message));
      else p.resolve(msg);
    };
    this.worker.onerror = (ev) => {
      const err = new Error(`trainer worker failed: ${ev.message || 'could not start the worker script'}`);
      for (const p of this.pending.values()) p.reject(err);
      this.pending.clear();
      for (const l of this.crashListeners) l(err.message);
    };
  }

  request(req: DistributiveOmit<WorkerRequest, 'id'>): Promise<WorkerResponse> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.worker.postMessage({ ...req, id } as WorkerRequest);
    });
  }

  /** Subscribes to run events; returns the unsubscribe function. */
  subscribe(listener: (e: WorkerEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Called when the worker itself fails (an error its script did not catch); returns the unsubscribe function. */
  onCrash(listener: (message: string) => void): () => void {
    this.crashListeners.add(listener);
    return () => this.crashListeners.delete(listener);
  }

  terminate(): void {
    this.worker.terminate();
  }
}
