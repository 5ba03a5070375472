/**
 * The browser's tool sandbox (docs/security.md): a hidden `<iframe sandbox="allow-scripts">`
 * (public/tool-sandbox.html) whose origin is opaque, so IndexedDB, caches and the app's
 * storage do not exist for it, and whose Content-Security-Policy (`default-src 'none'`)
 * forbids every connection; the tool workers it starts from a Blob URL inherit both. The
 * executor reaches its worker over a MessageChannel of its own (no hop through the frame).
 * A worker serves an executor's calls until one times out; with `isFreshPerCall` (task-file
 * code) each call gets a fresh worker instead, so no call sees what another left in the
 * realm, at the cost of a worker start per call (the frame keeps one ready).
 *
 * The page opens the frame; a worker (the trainer) cannot, so the page hands it a port to the
 * frame (`connectToolSandbox`, sent with the trainer worker's `tool-sandbox` message).
 * Frame protocol, over a host port: → {type:'spawn', spawnId} + the call's port;
 * → {type:'terminate', spawnId}; ← {type:'ready'}; ← {type:'failed', spawnId, reason}.
 */
import type { WorkerFactory, WorkerHandle } from './types';
import { WORKER_SOURCE } from './runtimeSource';

/** The frame page, under the app's base URL (Vite copies public/ into the build). */
export const TOOL_SANDBOX_PAGE = 'tool-sandbox.html';
/** How long the frame may take to answer its first connection. */
export const FRAME_READY_TIMEOUT_MS = 15_000;

let frameWindow: Promise<Window> | null = null;
let givenPort: MessagePort | null = null;

function openFrame(): Promise<Window> {
  frameWindow ??= new Promise<Window>((resolve, reject) => {
    const iframe = document.createElement('iframe');
    iframe.setAttribute('sandbox', 'allow-scripts');
    iframe.setAttribute('aria-hidden', 'true');
    iframe.tabIndex = -1;
    iframe.title = 'tool sandbox';
    iframe.style.display = 'none';
    iframe.src = new URL(`${import.meta.env.BASE_URL}${TOOL_SANDBOX_PAGE}`, document.baseURI).href;
    iframe.addEventListener(
      'load',
      () =>
        iframe.contentWindow
          ? resolve(iframe.contentWindow)
          : reject(new Error('the tool sandbox frame has no window')),
      { once: true },
    );
    document.body.append(iframe);
  });
  return frameWindow;
}

/** (Page only) A new host port to the tool sandbox frame, opening the frame on first use. */
export function connectToolSandbox(): MessagePort {
  const channel = new MessageChannel();
  void openFrame().then((win) =>
    win.postMessage({ type: 'pact-tool-sandbox', workerSource: WORKER_SOURCE }, '*', [channel.port2]),
  );
  return channel.port1;
}

/** (Worker only) The host port the page sent; later executors in this worker use it. */
export function setToolSandboxPort(port: MessagePort): void {
  givenPort = port;
}

interface HostState {
  ready: Promise<void>;
  failures: Map<number, (reason: string) => void>;
}

const hosts = new WeakMap<MessagePort, HostState>();
let nextSpawnId = 1;

function attachHost(port: MessagePort): HostState {
  const known = hosts.get(port);
  if (known) return known;
  const failures = new Map<number, (reason: string) => void>();
  let markReady: () => void = () => {};
  const ready = new Promise<void>((resolve, reject) => {
    markReady = resolve;
    setTimeout(
      () =>
        reject(
          new Error(
            `the tool sandbox frame (${TOOL_SANDBOX_PAGE}) did not answer within ${FRAME_READY_TIMEOUT_MS} ms; is it served beside index.html?`,
          ),
        ),
      FRAME_READY_TIMEOUT_MS,
    );
  });
  ready.catch(() => undefined);
  port.onmessage = (event: MessageEvent) => {
    const data = event.data as { type?: string; spawnId?: number; reason?: string } | null;
    if (data?.type === 'ready') markReady();
    else if (data?.type === 'failed' && typeof data.spawnId === 'number')
      failures.get(data.spawnId)?.(String(data.reason ?? 'worker error'));
  };
  const state = { ready, failures };
  hosts.set(port, state);
  return state;
}

export interface FrameFactoryOptions {
  /** Default: a new connection from a page, or the port the page gave this worker. */
  hostPort?: MessagePort;
  /** A fresh worker per call (for task-file code); default: one worker serves many calls. */
  isFreshPerCall?: boolean;
}

/** A WorkerFactory of tool workers in the sandbox frame. */
export function createFrameWorkerFactory(options: FrameFactoryOptions = {}): WorkerFactory {
  const port = options.hostPort ?? (typeof document !== 'undefined' ? connectToolSandbox() : givenPort);
  if (!port) {
    throw new Error(
      'no tool sandbox here: the page must send this worker a port to the tool sandbox frame (connectToolSandbox) before tools run',
    );
  }
  const host = attachHost(port);
  return async (): Promise<WorkerHandle> => {
    await host.ready;
    const spawnId = nextSpawnId++;
    const channel = new MessageChannel();
    port.postMessage({ type: 'spawn', spawnId }, [channel.port2]);
    return {
      isSingleUse: options.isFreshPerCall === true,
      post: (message) => channel.port1.postMessage(message),
      listen: (onMessage, onFailure) => {
        channel.port1.onmessage = (event: MessageEvent) => onMessage(event.data);
        channel.port1.onmessageerror = () => onFailure('a message could not be read');
        host.failures.set(spawnId, onFailure);
      },
      terminate: () => {
        host.failures.delete(spawnId);
        port.postMessage({ type: 'terminate', spawnId });
        channel.port1.close();
      },
    };
  };
}
