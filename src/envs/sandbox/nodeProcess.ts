/**
 * Sandbox processes in Node (docs/security.md): a child `node` under Node's permission model
 * (no fs-write, child_process, worker, addon, WASI or inspector grant; fs-read only where the
 * caller names it), with an empty environment, a cap on all private memory (RLIMIT_DATA, which
 * counts ArrayBuffers as well as the V8 heap), and, where Linux lets an unprivileged user make
 * one (`unshare -rn`), an empty network namespace. The program locks the rest itself
 * (NODE_LOCKDOWN_SOURCE). Data crosses only over the IPC channel, as JSON: stdin, stdout and
 * stderr are /dev/null, so nothing the process prints reaches the host.
 *
 * Node writes a few files from native code, past the permission model: trace events
 * (`node_trace.N.log`) and heap snapshots near the heap limit (`Heap.*.heapsnapshot`). Their
 * APIs are sealed by the lockdown; on POSIX the process is also started with their output
 * pointed at /dev/null (`--trace-event-file-pattern`, `--diagnostic-dir`), and in every case its
 * working folder is a fresh empty temporary folder, removed when it exits, never the host's
 * (`pact-tool-sandbox-<host pid>-*`: one a killed host left behind goes at the next host's first spawn).
 *
 * Node-only; no static import of a Node builtin, so the browser bundle can include the module.
 */
import type { WorkerFactory, WorkerHandle } from './types';
import { NODE_TOOL_PROCESS_SOURCE } from './nodeSandboxSource';

type ChildProcessModule = typeof import('node:child_process');
type ChildProcess = import('node:child_process').ChildProcess;
type FsModule = typeof import('node:fs');
type OsModule = typeof import('node:os');
type PathModule = typeof import('node:path');

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
/** Working folders of this host's sandbox processes that have not exited yet. */
const liveSandboxFolders = new Set<string>();
let isExitHookSet = false;
let isSweepDone = false;
const SANDBOX_FOLDER_PREFIX = 'pact-tool-sandbox-';

/**
 * Removes the working folders left by hosts that are gone (a host killed by a signal runs no
 * exit hook): `pact-tool-sandbox-<host pid>-*` whose host pid is not a live process.
 */
function sweepOrphanFolders(fs: FsModule, tmp: string, join: (...parts: string[]) => string): void {
  let names: string[];
  try {
    names = fs.readdirSync(tmp);
  } catch {
    return;
  }
  for (const name of names) {
    const match = /^pact-tool-sandbox-(\d+)-[A-Za-z0-9]{6}$/.exec(name);
    const pid = match ? Number(match[1]) : NaN;
    if (!Number.isSafeInteger(pid) || pid <= 0 || pid === process.pid) continue;
    try {
      process.kill(pid, 0);
      continue; // its host is alive
    } catch (error) {
      if ((error as { code?: string }).code !== 'ESRCH') continue; // alive under another user, or unknown
    }
    try {
      fs.rmSync(join(tmp, name), { recursive: true, force: true });
    } catch {
      // another host swept it first
    }
  }
}
let networkCut: NetworkCut | null = null;

// A variable specifier keeps bundlers from pulling a Node builtin into the browser build.
function loadBuiltin<T>(name: string): Promise<T> {
  return import(/* @vite-ignore */ name) as Promise<T>;
}

function loadChildProcess(): Promise<ChildProcessModule> {
  childProcess ??= loadBuiltin<ChildProcessModule>('node:child_process');
  return childProcess;
}

/**
 * Flags that send Node's native file writers, which the permission model does not cover, to
 * /dev/null: trace events (`trace_events.createTracing`) and diagnostic files such as heap
 * snapshots near the heap limit (`v8.setHeapSnapshotNearHeapLimit`; a folder under /dev/null
 * cannot exist, so the snapshot is never written). POSIX only; elsewhere the lockdown's seals
 * and the throwaway working folder remain.
 */
export function nativeWriterFlags(): string[] {
  if (process.platform === 'win32') return [];
  return ['--trace-event-file-pattern=/dev/null', '--diagnostic-dir=/dev/null/pact-tool-sandbox'];
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
  const fs = await loadBuiltin<FsModule>('node:fs');
  const os = await loadBuiltin<OsModule>('node:os');
  const path = await loadBuiltin<PathModule>('node:path');
  const nodeArgs = [
    ...permissionFlags(options.allowFsRead),
    ...nativeWriterFlags(),
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
  // The shell exports PWD (and may OLDPWD) even from an empty environment: unset before exec.
  const [command, args] = isPosix
    ? [
        '/bin/sh',
        [
          '-c',
          'unset PWD OLDPWD; ulimit -d "$0" && exec "$@"',
          String(options.limits.dataMb * 1024),
          ...node,
          ...nodeArgs,
        ],
      ]
    : [node[0], [...node.slice(1), ...nodeArgs]];
  // A working folder of its own, empty, removed when the process exits: whatever some native
  // writer might still put in "." never lands in the host's folder.
  if (!isSweepDone) {
    isSweepDone = true;
    sweepOrphanFolders(fs, os.tmpdir(), path.join);
  }
  const cwd = fs.mkdtempSync(path.join(os.tmpdir(), `${SANDBOX_FOLDER_PREFIX}${process.pid}-`));
  const removeCwd = () => {
    liveSandboxFolders.delete(cwd);
    fs.rmSync(cwd, { recursive: true, force: true });
  };
  // A host that exits first takes its processes' folders with it (they exit on disconnect).
  liveSandboxFolders.add(cwd);
  if (liveSandboxFolders.size === 1 && !isExitHookSet) {
    isExitHookSet = true;
    process.once('exit', () => {
      for (const folder of liveSandboxFolders) fs.rmSync(folder, { recursive: true, force: true });
    });
  }
  let child: ChildProcess;
  try {
    child = cp.spawn(command as string, args as string[], {
      // Only the IPC channel: the process's stdout and stderr go to /dev/null, not to the host.
      stdio: ['ignore', 'ignore', 'ignore', 'ipc'],
      serialization: 'json',
      env: {},
      cwd,
      windowsHide: true,
    });
  } catch (error) {
    removeCwd();
    throw error;
  }
  child.once('exit', removeCwd);
  // A process that never started emits 'error' and no 'exit'.
  child.once('error', () => {
    if (child.pid === undefined) removeCwd();
  });
  return child;
}

/**
 * Wraps a sandbox process as a WorkerHandle. Its failure reason is the exit code or signal
 * alone: the process has no stderr for the host to read, so tool code cannot write into it.
 */
export function wrapChildProcess(child: ChildProcess, graceMs: number): WorkerHandle {
  // Neither the process nor its channel keeps the host alive; a pending call's timer does.
  child.unref();
  child.channel?.unref();
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
        const hint = signal === 'SIGABRT' || code === 134 ? ': it aborted (out of memory, or a fatal error)' : '';
        onFailure(`exit ${signal ?? code}${hint}`);
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
