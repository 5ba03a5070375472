/**
 * FTRL's Python tools for a VeRL export (docs/verl-export.md, "Tools"): each call runs the
 * task's own Python source in a fresh `python3 -I` process, answering with the app's own
 * Python runtime (envs/ftrl/pythonRuntime.ts `pact_call_tool`, then the sandbox guard's cut
 * and `os.system` refusal, pyodideWorkerCore.ts), so the observation is the text the app's
 * Pyodide executor gives for the same call. Three layers keep a hostile tool from the machine:
 *
 *   - the process: an empty environment (`os.environ` is empty when the tool runs), `-I` (no user
 *     site, no PYTHON* variables, no script folder on sys.path), a fresh empty temporary folder as
 *     the working directory, removed after the call;
 *   - rlimits set by the runner before any tool code: CPU seconds (the wall limit + 1, rounded up;
 *     SIGXCPU there, SIGKILL a second later), address space, file size, core 0, and processes 0
 *     (RLIMIT_NPROC; Linux does not apply it to root); the wall-clock limit counted from the
 *     runner's "ready" line (as the app's clock starts once Pyodide is loaded): past it the process
 *     is killed and the answer is the app's timeout text;
 *   - the audit hook of pythonAuditHook.ts, installed before the app's runtime and any tool code:
 *     no network, no new process or signal to another, no file outside the working folder except
 *     the Python library read-only, no ctypes, no second hook; what it refuses answers as any tool
 *     exception does (`an error occured when call NAME: … is refused in the tool sandbox (…)`).
 *
 * Audit hooks are not a security boundary on their own: a C extension already loaded, a bug in
 * CPython, or bytecode built by hand (code.replace, marshal) can get past one, and a tool can still
 * stat any path; docs/security.md ("Limits") lists what remains. It is not the app's Pyodide sandbox.
 * Node only; bundled into DIR/pact_verl/tool_server.mjs with the rest of the tool server.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PYTHON_SANDBOX_GUARD_SOURCE } from '../../envs/ftrl/pyodideWorkerCore';
import { PYTHON_RUNTIME_SOURCE } from '../../envs/ftrl/pythonRuntime';
import { PYTHON_AUDIT_HOOK_SOURCE } from './pythonAuditHook';
import { MAX_OUTPUT_CHARS } from '../../envs/sandbox/runtimeSource';
import { formatToolError, type ExecuteOptions, type ToolExecutor, type ToolResult } from '../../envs/sandbox/types';
import type { ToolImplementation } from '../../envs/types';

export interface PythonToolLimits {
  /** RLIMIT_AS, MiB (the app's Pyodide sandbox: 2048 MiB of wasm data). */
  addressSpaceMb: number;
  /** RLIMIT_FSIZE, MiB: the largest file a tool may write. */
  fileSizeMb: number;
  /** RLIMIT_CPU, seconds; default: ceil(wall limit / 1000) + 1, so the wall limit decides. */
  cpuSeconds?: number;
}

export const DEFAULT_PYTHON_TOOL_LIMITS: Readonly<PythonToolLimits> = Object.freeze({
  addressSpaceMb: 2048,
  fileSizeMb: 8,
});

/** How long an interpreter may take to start and set its limits, before the call's own clock starts. */
const START_TIMEOUT_MS = 30_000;

/** The most bytes a tool process may write to its stdout before it is killed (the answer is far smaller). */
const MAX_STDOUT_BYTES = 1 << 20;

/**
 * The runner, run as `python3 -I -c RUNNER`: limits first, then the audit hook (pythonAuditHook.ts),
 * then the app's runtime and guard, then one request from stdin ({source, name, argumentsJson}),
 * one answer on the saved stdout. print() inside a tool goes nowhere, as in the app (Pyodide's
 * stdout is silent).
 */
export function formatRunnerSource(limits: { cpuSeconds: number; addressSpaceMb: number; fileSizeMb: number }): string {
  return String.raw`
import json, os, resource, sys

def _pact_limit(name, soft, hard=None):
    kind = getattr(resource, name, None)
    if kind is None:
        return
    hard = soft if hard is None else hard
    now = resource.getrlimit(kind)[1]
    if now != resource.RLIM_INFINITY:
        soft, hard = min(soft, now), min(hard, now)
    resource.setrlimit(kind, (soft, hard))

# CPU: SIGXCPU at the soft limit, SIGKILL a second later (a tool that catches SIGXCPU).
_pact_limit('RLIMIT_CPU', ${limits.cpuSeconds}, ${limits.cpuSeconds + 1})
_pact_limit('RLIMIT_AS', ${limits.addressSpaceMb} * 1024 * 1024)
_pact_limit('RLIMIT_FSIZE', ${limits.fileSizeMb} * 1024 * 1024)
_pact_limit('RLIMIT_CORE', 0)
_pact_limit('RLIMIT_NPROC', 0)

os.environ.clear()  # PEP 538 set LC_CTYPE while the interpreter started; the tool sees none
_pact_out = os.fdopen(os.dup(1), 'w', encoding='utf-8')
_pact_null = open(os.devnull, 'w')
sys.stdout = sys.stderr = _pact_null
${PYTHON_AUDIT_HOOK_SOURCE}
_pact_install_sandbox(os.getcwd())
del _pact_install_sandbox
${PYTHON_RUNTIME_SOURCE}
${PYTHON_SANDBOX_GUARD_SOURCE}
_pact_out.write('ready\n')
_pact_out.flush()
_pact_request = json.loads(sys.stdin.read())
_pact_answer = pact_sandbox_call_tool(_pact_request['source'], _pact_request['name'], _pact_request['argumentsJson'])
_pact_out.write(json.dumps({'observation': _pact_answer[0], 'isError': _pact_answer[1] is True}) + '\n')
_pact_out.flush()
`;
}

/** The worker's second cut (pyodideWorkerCore.ts `cut`, on JavaScript's UTF-16 length). */
function cutObservation(text: string): string {
  return text.length > MAX_OUTPUT_CHARS
    ? text.slice(0, MAX_OUTPUT_CHARS) + ' …[output cut at ' + MAX_OUTPUT_CHARS + ' characters]'
    : text;
}

/** One Python tool call in its own process; resolves with the app's observation, never rejects. */
export function runPythonToolProcess(
  python: string,
  source: string,
  name: string,
  args: Record<string, unknown>,
  timeoutMs: number,
  limits: PythonToolLimits = DEFAULT_PYTHON_TOOL_LIMITS,
): Promise<ToolResult> {
  const cpuSeconds = limits.cpuSeconds ?? Math.ceil(timeoutMs / 1000) + 1;
  const runner = formatRunnerSource({ ...limits, cpuSeconds });
  let cwd: string;
  try {
    cwd = mkdtempSync(path.join(tmpdir(), 'pact-tool-'));
  } catch (e) {
    const message = `no working folder for the Python tool process (${(e as Error).message})`;
    return Promise.resolve({ ok: false, output: formatToolError(name, message) });
  }
  return new Promise<ToolResult>((resolve) => {
    let settled = false;
    let stdout = '';
    let stdoutBytes = 0;
    const child = spawn(python, ['-I', '-c', runner], { cwd, env: {}, stdio: ['pipe', 'pipe', 'ignore'] });
    // Until the runner is up, a generous start limit; then the call's own limit.
    let timer: ReturnType<typeof setTimeout> | undefined = setTimeout(
      () => fail(`the Python tool process did not start within ${START_TIMEOUT_MS} ms`),
      START_TIMEOUT_MS,
    );
    const finish = (result: ToolResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      rmSync(cwd, { recursive: true, force: true });
      resolve(result);
    };
    const fail = (message: string) => finish({ ok: false, output: formatToolError(name, message) });
    child.on('error', (e) => fail(`the Python tool process could not start (${e.message})`));
    child.stdin.on('error', () => {}); // a runner that died before reading; its exit says why
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => {
      stdoutBytes += Buffer.byteLength(chunk);
      if (stdoutBytes > MAX_STDOUT_BYTES) return fail('the Python tool process wrote too much');
      const wasReady = stdout.startsWith('ready\n');
      stdout += chunk;
      if (!wasReady && stdout.startsWith('ready\n')) {
        // The clock starts once the interpreter is up, as the app's starts once Pyodide is loaded.
        clearTimeout(timer);
        timer = setTimeout(() => fail(`timed out after ${timeoutMs} ms`), timeoutMs);
        child.stdin.end(JSON.stringify({ source, name, argumentsJson: JSON.stringify(args ?? {}) }));
      }
    });
    child.on('close', (code, signal) => {
      const lines = stdout.split('\n');
      const last = lines.length >= 3 ? lines[lines.length - 2] : '';
      try {
        const answer = JSON.parse(last) as { observation: string; isError: boolean };
        return finish({ ok: !answer.isError, output: cutObservation(String(answer.observation)) });
      } catch {
        return fail(`the Python tool process stopped (${signal ?? `exit code ${code}`})`);
      }
    });
  });
}

/** A ToolExecutor for Python implementations: one process per call (runPythonToolProcess). */
export class PythonProcessExecutor implements ToolExecutor {
  constructor(
    private readonly python: string,
    private readonly defaultTimeoutMs: number,
    private readonly limits: PythonToolLimits = DEFAULT_PYTHON_TOOL_LIMITS,
  ) {}

  execute(
    impl: ToolImplementation,
    toolName: string,
    args: Record<string, unknown>,
    options: ExecuteOptions = {},
  ): Promise<ToolResult> {
    if (impl.language !== 'python')
      return Promise.resolve({ ok: false, output: formatToolError(toolName, 'the tool is not implemented in Python') });
    return runPythonToolProcess(
      this.python,
      impl.source,
      toolName,
      args,
      options.timeoutMs ?? this.defaultTimeoutMs,
      this.limits,
    );
  }

  dispose(): void {}
}
