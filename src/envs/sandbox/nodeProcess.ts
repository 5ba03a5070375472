/**
 * Sandbox processes in Node (docs/security.md): a child `node` under Node's permission model
 * (no fs-write, child_process, worker, addon, WASI or inspector grant; fs-read only where the
 * caller names it), with an empty environment, a cap on all private memory (RLIMIT_DATA, which
 * counts ArrayBuffers as well as the V8 heap), and, where Linux lets an unprivileged user make
 * one (`unshare -rn`), an empty network namespace. The program locks the rest itself
 * (NODE_LOCKDOWN_SOURCE). Data crosses only over the IPC channel, as JSON.
 *
 * Node-only; no static import of a Node builtin, so the browser bundle can include the module.
 */
import type { WorkerFactory, WorkerHandle } from './workerExecutor';
import { NODE_TOOL_PROCESS_SOURCE } from './nodeSandboxSource';

type ChildProcessModule = typeof import('node:child_process');
type ChildProcess = import('node:child_process').ChildProcess;

/** Limits of one sandbox process. */
export interface SandboxLimits {
  /** V8 old-space limit (MiB). */
  heapMb: number;
  /** All private writable memory of the process (MiB): heap, ArrayBuffers, wasm memories, code. */
  dataMb: number;
}

/** The JavaScript tool process: room for the stubs' tables, far from the host's memory. */
export const NODE_SANDBOX_LIMITS: SandboxLimits = { heapMb: 128, dataMb: 512 };

export interface SandboxedNodeOptions {
  /** The program, run by `node -e` (or as an ES module with `isModule`). */
  source: string;
  isModule?: boolean;
  /** Files or folders the process may read (Node's --allow-fs-read); nothing else. */
  allowFsRead?: string[];
  limits: SandboxLimits;
  /** Extra `process.argv` entries for the program. */
  argv?: string[];
}

/** How a sandbox process is cut off from the network on this machine (measured once). */
export type NetworkCut = 'namespace' | 'lockdown-only';

let childProcess: Promise<ChildProcessModule> | null = null;
let networkCut: NetworkCut | null = null;

function loadChildProcess(): Promise<ChildProcessModule> {
  // A variable specifier keeps bundlers from pulling a Node builtin into the browser build.
  const specifier = 'node:child_process';
  childProcess ??= import(/* @vite-ignore */ specifier) as Promise<ChildProcessModule>;
  return childProcess;
}

/** 'namespace' when `unshare -rn` works here (Linux with user namespaces), else 'lockdown-only'. */
export async function probeNetworkCut(): Promise<NetworkCut> {
  if (networkCut) return networkCut;
  const cp = await loadChildProcess();
  let isNamespace = false;
  if (process.platform === 'linux') {
    try {
      isNamespace = cp.spawnSync('unshare', ['-rn', '--', 'true'], { stdio: 'ignore', timeout: 5_000 }).status === 0;
    } catch {
      isNamespace = false;
    }
  }
  networkCut = isNamespace ? 'namespace' : 'lockdown-only';
  return networkCut;
}

/** Node's flags for the permission model, in the spelling of the running version. */
export function permissionFlags(allowFsRead: string[] = []): string[] {
  const flags = process.allowedNodeEnvironmentFlags;
  const isStable = flags.has('--permission');
  const grants = allowFsRead.map((p) => `--allow-fs-read=${isStable ? p : `${p.replace(/\/+$/, '')}/*`}`);
  const quiet = flags.has('--disable-warning') ? ['--disable-warning=ExperimentalWarning'] : [];
  return [isStable ? '--permission' : '--experimental-permission', ...grants, ...quiet];
}

/** Starts a sandbox process with an IPC channel (JSON serialisation). */
export async function spawnSandboxedNode(options: SandboxedNodeOptions): Promise<ChildProcess> {
  const cp = await loadChildProcess();
  const cut = await probeNetworkCut();
  const nodeArgs = [
    ...permissionFlags(options.allowFsRead),
    `--max-old-space-size=${options.limits.heapMb}`,
    '--max-semi-space-size=16',
    ...(options.isModule ? ['--input-type=module'] : []),
    '-e',
    options.source,
    '--',
    ...(options.argv ?? []),
  ];
  const node = cut === 'namespace' ? ['unshare', '-rn', '--', process.execPath] : [process.execPath];
  const isPosix = process.platform !== 'win32';
  // RLIMIT_DATA through the shell's ulimit (KiB); `exec` keeps one process, whose pid we hold.
  const [command, args] = isPosix
    ? ['/bin/sh', ['-c', 'ulimit -d "$0" && exec "$@"', String(options.limits.dataMb * 1024), ...node, ...nodeArgs]]
    : [node[0], [...node.slice(1), ...nodeArgs]];
  return cp.spawn(command as string, args as string[], {
    stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
    serialization: 'json',
    env: {},
    windowsHide: true,
  });
}

/** Wraps a sandbox process as a WorkerHandle; stderr's tail goes into the failure reason. */
export function wrapChildProcess(child: ChildProcess, graceMs: number): WorkerHandle {
  let stderrTail = '';
  child.stderr?.setEncoding('utf8');
  child.stderr?.on('data', (chunk: string) => {
    stderrTail = (stderrTail + chunk).slice(-2_000);
  });
  // Neither the process nor its pipes keep the host alive; a pending call's timer does.
  child.unref();
  child.channel?.unref();
  (child.stderr as { unref?: () => void } | null)?.unref?.();
  return {
    graceMs,
    post: (message) => {
      if (!child.connected) throw new Error('the tool process is not running');
      child.send(message as never);
    },
    listen: (onMessage, onFailure) => {
      child.on('message', onMessage);
      child.on('error', (e) => onFailure(e.message));
      child.on('exit', (code, signal) => {
        const last = stderrTail.trim().split('\n').slice(-2).join(' ').slice(0, 300);
        onFailure(`exit ${signal ?? code}${last ? `: ${last}` : ''}`);
      });
    },
    terminate: () => {
      child.kill('SIGKILL');
    },
  };
}

/**
 * A WorkerFactory of JavaScript tool processes. `isEscapeDrill` (tests only) runs tool code in
 * the process's own realm, as if it had escaped its context, to test the process boundary.
 */
export function createNodeProcessFactory(
  options: { limits?: SandboxLimits; isEscapeDrill?: boolean } = {},
): WorkerFactory {
  return async () => {
    const child = await spawnSandboxedNode({
      source: NODE_TOOL_PROCESS_SOURCE,
      limits: options.limits ?? NODE_SANDBOX_LIMITS,
      argv: options.isEscapeDrill ? ['--escape-drill'] : [],
    });
    // The process stops a call at its limit itself and stays; the executor kills it only if it does not.
    return wrapChildProcess(child, 1_000);
  };
}
