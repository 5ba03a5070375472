/**
 * `pact export verl` of an FTRL run (tasks.source 'ftrl'), on a task file written here (not
 * benchmark data: the two hand-written lines of run/ftrlTestLines.ts and three lines whose
 * Python tools raise, loop, call os.system, read files and probe their process):
 *
 * - the rows are the lines of pact train's split (splitFtrlTasks, computed here), in the
 *   trainer's data order, with the fields FTRL's compute_solve_f1 reads (answer, unsolved_set);
 * - every call answers through the exported tool server (and its Python client) with the very
 *   text the app's executor gives (RolloutEnv.step over Pyodide, the app's FTRL executor),
 *   a valid call, missing/extra arguments, an unknown tool, a raise, a loop past
 *   tasks.toolTimeoutMs, os.system, long and structured outputs;
 * - what the docs claim of the process boundary holds: an empty environment, an empty
 *   working folder removed afterwards, address-space / file-size / CPU limits enforced, no
 *   new process for root or an unprivileged user, /etc/passwd unread (the audit hook of
 *   pythonAuditHook.ts; pythonToolSandbox.test.ts tries the hook itself);
 * - where FTRL's own test file is here ($PACT_FTRL_TASKS or ../shared/data/ftrl/test.jsonl; read
 *   in place, else the test says so and skips): its split is pact train's, and every tool of its
 *   first 20 tasks answers through the exported server as in the app.
 */
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ftrlReward } from '../../core/ftrlReward';
import { answerF1 } from '../../core/rewards';
import { createRng, permutation } from '../../core/rng';
import { LanguageRoutingExecutor } from '../../envs/ftrl/languageExecutor';
import { createNodePyodideExecutor } from '../../envs/ftrl/pyodideExecutorNode';
import { formatObservationBlock, RolloutEnv } from '../../envs/rollout';
import type { Task, ToolCall } from '../../envs/types';
import { resolveConfig } from '../../recipes/config';
import { readFtrlTaskFile, splitFtrlTasks } from '../../run/ftrlTaskSplit';
import { formatToolCallBlock } from '../../traces/render';
import { exportVerl, type ExportResult } from './exportVerl';
import { runPythonToolProcess } from './pythonToolProcess';
import { answerToolCall, createToolServerExecutor } from './toolAnswer';
import { FILE_LINES } from './ftrlTestFile';
import { askToolServer, findToolPython, findVerlTestPython, readParquet, runPythonCheck } from './testPython';

const TOOL_TIMEOUT_MS = 1500;

function experiment(tasksFile: string) {
  return {
    name: 'ftrl-tiny',
    base: {
      recipe: 'ftrl',
      tasks: {
        source: 'ftrl',
        path: tasksFile,
        trainLines: '1-3',
        testLines: '4-5',
        nTrain: 3,
        nTest: 2,
        toolTimeoutMs: TOOL_TIMEOUT_MS,
      },
      steps: 5,
      batchPrompts: 2,
      miniBatchPrompts: 1,
      rolloutsPerPrompt: 2,
      maxTurns: 3,
    },
    runs: [{ name: 'ftrl' }, { name: 'grpo', recipe: 'grpo' }, { name: 'pact', recipe: 'pact' }],
    seeds: [4],
  };
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Row = Record<string, any>;

let root: string;
let tasksFile: string;
let configPath: string;
let dir: string;
let result: ExportResult;

const PY = findToolPython();

beforeAll(async () => {
  root = mkdtempSync(path.join(tmpdir(), 'pact-ftrl-export-'));
  tasksFile = path.join(root, 'tasks.jsonl');
  writeFileSync(tasksFile, FILE_LINES.join('\n') + '\n');
  configPath = path.join(root, 'ftrl-tiny.json');
  writeFileSync(configPath, JSON.stringify(experiment(tasksFile)));
  dir = path.join(root, 'out');
  result = await exportVerl({ configPath, outDir: dir, run: 'ftrl' });
}, 120_000);

afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('pact export verl on an FTRL task file', () => {
  it("writes pact train's split: train rows in the trainer's order, held-out rows, compute_solve_f1's fields", async () => {
    const config = resolveConfig({ ...experiment(tasksFile).base, seed: 4 });
    const split = splitFtrlTasks({
      train: { name: tasksFile, text: readFileSync(tasksFile, 'utf8') },
      tasks: config.tasks,
    });
    expect(split.train.map((t) => t.line)).toEqual([1, 2, 3]);
    expect(split.test.map((t) => t.line)).toEqual([4, 5]);
    expect(result.taskSplit?.statement).toBe(split.split.statement);
    const train: Task[] = split.train.map((t) => t.task);
    const rows = await readParquet<Row>(path.join(dir, 'data/train.parquet'));
    expect(rows.length).toBe(config.steps * config.batchPrompts);
    rows.forEach((row, r) => {
      const epoch = Math.floor(r / train.length);
      const index = permutation(train.length, createRng(4).split(`data/epoch${epoch}`))[r % train.length];
      const task = train[index];
      const e = row.extra_info;
      expect([Number(e.index), Number(e.step), Number(e.position)]).toEqual([index, Math.floor(r / 2) + 1, r % 2]);
      expect(row.data_source).toBe('pact/ftrl');
      expect(e.task_id).toBe(task.id);
      expect(row.prompt[1].content).toContain(task.question);
      expect(JSON.parse(row.reward_model.ground_truth)).toEqual({
        answer: task.answer,
        gold_calls: task.goldCalls ?? [],
        unsolved_set: task.unsolvedSet,
      });
      expect(JSON.parse(e.implementations)).toEqual(task.implementations);
      expect(Object.values(JSON.parse(e.implementations)).every((i) => (i as Row).language === 'python')).toBe(true);
      expect(JSON.parse(e.tools)).toEqual(task.tools);
      expect(Number(e.tool_timeout_ms)).toBe(TOOL_TIMEOUT_MS);
      expect([Number(e.pact_gate), e.expert_trace]).toEqual([-1, '']);
    });
    const test = await readParquet<Row>(path.join(dir, 'data/test.parquet'));
    expect(test.map((r) => r.extra_info.task_id)).toEqual(split.test.map((t) => t.task.id));
    expect(test.map((r) => JSON.parse(r.reward_model.ground_truth).unsolved_set)).toEqual(
      split.test.map((t) => t.task.unsolvedSet),
    );
    expect(readFileSync(path.join(dir, 'data/sft.json'), 'utf8')).toBe('');
    const readme = readFileSync(path.join(dir, 'README.md'), 'utf8');
    expect(readme).toContain(split.split.statement);
    expect(readme).toContain('This is a process boundary, not the Pyodide sandbox the app runs these tools in');
    expect(readme).toContain(`timed out after ${TOOL_TIMEOUT_MS} ms`);
    expect(readme).toContain(
      `**tool-call time limit**: each row's extra_info.tool_timeout_ms (${TOOL_TIMEOUT_MS} ms, tasks.toolTimeoutMs)`,
    );
  });

  it("the exported reward scores an FTRL row's rollouts as the app does (compute_solve_f1, answer F1)", async () => {
    const torch = findVerlTestPython();
    if (!PY.python || !torch.python) {
      console.warn(`ftrlExport.test.ts: rewards not checked: ${PY.reason ?? torch.reason}`);
      return;
    }
    const rows = await readParquet<Row>(path.join(dir, 'data/train.parquet'));
    const row = rows.find((r) => JSON.parse(r.extra_info.implementations).country_capital)!;
    const task = result.trainTasks.find((t) => t.id === row.extra_info.task_id)!;
    const call = (code: unknown) => formatToolCallBlock({ name: 'country_capital', arguments: { code } });
    const rollouts = [
      [`<think>a</think>${call('FR')}<|im_end|>`, '<think>b</think><answer>Paris</answer><|im_end|>'],
      [`${call('XX')}<|im_end|>`, `${call('FR')}\n${call('DE')}<|im_end|>`, '<answer>Berlin</answer><|im_end|>'],
      ['<answer>Paris, France</answer><|im_end|>'],
    ];
    const executor = createToolServerExecutor(PY.python);
    const cases: object[] = [];
    const expected: number[][] = [];
    for (const texts of rollouts) {
      // Tool outputs as the exported server gives them (equal to the app's: the test above).
      const outputs: { name: string; output: string }[][] = [];
      for (const text of texts) {
        const calls = [...text.matchAll(/"code": "(\w+)"/g)].map((m) => ({
          name: 'country_capital',
          arguments: { code: m[1] },
        }));
        const o: { name: string; output: string }[] = [];
        for (const c of calls)
          o.push({
            name: c.name,
            output: (await answerToolCall({ ...c, tools: task.tools, implementations: task.implementations }, executor))
              .output,
          });
        outputs.push(o);
      }
      const observations = outputs.slice(0, -1).map((o) => formatObservationBlock(o.map((x) => x.output)));
      const groundTruth = JSON.parse(row.reward_model.ground_truth) as Row;
      cases.push({ kind: 'ftrl', turnTexts: texts, observations, groundTruth, options: {} });
      expected.push(
        ftrlReward(
          texts.map((text, i) => ({ text, calls: outputs[i] })),
          task.unsolvedSet,
          task.answer,
        ).turnRewards,
      );
      const answer = /<answer>([\s\S]*?)<\/answer>/.exec(texts.at(-1)!)?.[1] ?? '';
      cases.push({ kind: 'outcome_f1', turnTexts: texts, observations, groundTruth, options: {} });
      expected.push([...texts.slice(1).map(() => 0), answerF1(answer, task.answer)]);
    }
    expect(expected[0].at(-1)).toBeGreaterThan(0);
    expect(new Set(expected.map((r) => r.join(','))).size).toBeGreaterThan(3);
    const out = runPythonCheck(torch.python, { rewards: cases }) as { rewards: number[][] };
    expect(out.rewards.length).toBe(expected.length);
    out.rewards.forEach((r, i) => r.forEach((v, t) => expect(v, `case ${i} turn ${t}`).toBeCloseTo(expected[i][t], 9)));
  }, 60_000);

  it('the command line exports it (bin/pact.mjs, without loading the training code)', () => {
    const out = path.join(root, 'cli');
    const bin = path.resolve('bin', 'pact.mjs'); // tests run from the repository root
    const r = spawnSync('node', [bin, 'export', 'verl', '--config', configPath, '--out', out, '--run', 'ftrl'], {
      encoding: 'utf8',
    });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).toContain(result.taskSplit!.statement);
    expect(r.stdout).toContain('3 train tasks, 2 held-out tasks');
    expect(readFileSync(path.join(out, 'data/train.json'))).toEqual(readFileSync(path.join(dir, 'data/train.json')));
  }, 120_000);

  it('refuses what pact train refuses on FTRL files, with its reason', async () => {
    await expect(exportVerl({ configPath, outDir: path.join(root, 'pact'), run: 'pact' })).rejects.toThrow(
      /recipe "pact" cannot train on FTRL tasks: it needs expert traces/,
    );
    const noGold = path.join(root, 'nogold.json');
    const e = experiment(tasksFile);
    writeFileSync(noGold, JSON.stringify({ ...e, base: { ...e.base, recipe: 'matchtir' }, runs: [{ name: 'm' }] }));
    await expect(exportVerl({ configPath: noGold, outDir: path.join(root, 'm') })).rejects.toThrow(
      /recipe "matchtir" cannot train on FTRL tasks: MatchTIR's turn rewards match .* 1 of 3 train tasks carry none/,
    );
    const grpo = await exportVerl({ configPath, outDir: path.join(root, 'grpo'), run: 'grpo' });
    expect(grpo.trainTasks.map((t) => t.id)).toEqual(result.trainTasks.map((t) => t.id));
  }, 60_000);
});

function startServer(python: string, options: { env?: NodeJS.ProcessEnv; asUser?: number; dir?: string } = {}) {
  const script = path.join(options.dir ?? dir, 'pact_verl/tool_server.mjs');
  const args = [script, '--python', python];
  const [cmd, argv] =
    options.asUser === undefined
      ? ['node', args]
      : ['setpriv', [`--reuid=${options.asUser}`, `--regid=${options.asUser}`, '--clear-groups', 'node', ...args]];
  return spawn(cmd, argv, { stdio: ['pipe', 'pipe', 'inherit'], env: options.env ?? process.env });
}

describe('the exported Python tools answer as the app does', () => {
  const probeTask = () => result.trainTasks.find((t) => t.implementations.loop)!;
  const capitalTask = () => result.trainTasks.find((t) => t.implementations.country_capital)!;
  const containTask = () => result.testTasks.find((t) => t.implementations.environ)!;
  const request = (task: Task, call: ToolCall) => ({
    ...call,
    tools: task.tools,
    implementations: task.implementations,
    timeout_ms: TOOL_TIMEOUT_MS,
  });

  it('every call, through the tool server and its Python client, is the text of the app executor', async () => {
    if (!PY.python) {
      console.warn(`ftrlExport.test.ts: Python tools not checked: ${PY.reason}`);
      return;
    }
    const calls: [Task, ToolCall][] = [
      [capitalTask(), { name: 'country_capital', arguments: { code: 'FR' } }], // valid
      [capitalTask(), { name: 'country_capital', arguments: { code: 'XX' } }], // the tool raises
      [capitalTask(), { name: 'country_capital', arguments: {} }], // missing argument
      [capitalTask(), { name: 'country_capital', arguments: { code: 'FR', extra: 1 } }], // extra argument
      [capitalTask(), { name: 'no_such_tool', arguments: { code: 'FR' } }], // unknown tool
      [capitalTask(), { name: 'country_capital', arguments: { code: 7 } }], // wrong type
      [probeTask(), { name: 'loop', arguments: { x: 'a' } }], // past tasks.toolTimeoutMs
      [probeTask(), { name: 'shell', arguments: { x: 'a' } }], // os.system
      [probeTask(), { name: 'shaped', arguments: { x: 'ß' } }], // print() and a dict
      [probeTask(), { name: 'long', arguments: { x: 'a' } }], // cut at 4000 characters
      [probeTask(), { name: 'plain', arguments: { x: 'a' } }], // a float
      [probeTask(), { name: 'narrow', arguments: { x: 'a' } }], // the schema's argument is not the def's
    ];
    // The app: RolloutEnv.step over the app's FTRL executor (Pyodide), with the run's limit.
    const executor = new LanguageRoutingExecutor({ python: createNodePyodideExecutor({ timeoutMs: TOOL_TIMEOUT_MS }) });
    const expected: [boolean, string][] = [];
    try {
      for (const [task, call] of calls) {
        const env = new RolloutEnv({ executor, renderChat: () => '', maxTurns: 10, timeoutMs: TOOL_TIMEOUT_MS });
        env.reset(task);
        const { turn } = await env.step(`<think>x</think>${formatToolCallBlock(call)}<|im_end|>`);
        expected.push([turn.outputs[0].ok, turn.outputs[0].output]);
      }
    } finally {
      executor.dispose();
    }
    // The texts are what they should be, not only equal (a sanity check of the comparison).
    expect(expected[0]).toEqual([true, 'Paris (of BE, DE, FR)']);
    expect(expected[1]).toEqual([false, "an error occured when call country_capital: unknown code 'XX'"]);
    expect(expected[6]).toEqual([false, `an error occured when call loop: timed out after ${TOOL_TIMEOUT_MS} ms`]);
    expect(expected[7]).toEqual([
      false,
      'an error occured when call shell: os.system is not available in the tool sandbox',
    ]);
    expect(expected[9][1]).toMatch(/^(ab){2000} …\[output cut at 4000 characters\]$/);

    const server = startServer(PY.python);
    const answers = await askToolServer(
      server,
      calls.map(([task, call]) => request(task, call)),
    );
    server.stdin.end();
    expect(answers).toEqual(expected);

    const torch = findVerlTestPython();
    if (!torch.python) {
      console.warn(`ftrlExport.test.ts: Python client not checked: ${torch.reason}`);
      return;
    }
    const out = runPythonCheck(torch.python, {
      tools: {
        server: path.join(dir, 'pact_verl/tool_server.mjs'),
        python: PY.python,
        calls: calls.map(([task, call]) => request(task, call)),
      },
    });
    expect(out.tools).toEqual(expected);
  }, 120_000);

  it('a tool runs with an empty environment in an empty folder, removed after the call, within its limits', async () => {
    if (!PY.python) {
      console.warn(`ftrlExport.test.ts: process limits not checked: ${PY.reason}`);
      return;
    }
    const task = containTask();
    const names = ['environ', 'where', 'passwd', 'grab', 'scribble', 'limits', 'spawn'];
    const server = startServer(PY.python, { env: { ...process.env, PACT_SECRET: 'do-not-leak' } });
    const answers = await askToolServer(
      server,
      names.map((name) => request(task, { name, arguments: { x: 'a' } })),
    );
    server.stdin.end();
    const [environ, where, passwd, grab, scribble, limits, spawned] = answers;
    expect(environ).toEqual([true, '{}']);
    const [cwd, listing] = JSON.parse(where[1]) as [string, string[]];
    expect(path.basename(cwd)).toMatch(/^pact-tool-/);
    expect(listing).toEqual([]);
    expect(existsSync(cwd)).toBe(false);
    // The audit hook: no file outside the working folder but the Python library, read-only.
    expect(passwd).toEqual([
      false,
      "an error occured when call passwd: open '/etc/passwd' is refused in the tool sandbox (outside the call's folder)",
    ]);
    // Whoever runs the server (root included, where RLIMIT_NPROC does not apply), no process starts.
    expect(spawned).toEqual([
      false,
      'an error occured when call spawn: subprocess.Popen is refused in the tool sandbox (no new processes)',
    ]);
    // 3 GiB over the 2 GiB address space; 9 MiB over the 8 MiB file size.
    expect(grab).toEqual([false, 'an error occured when call grab: ']);
    expect(scribble).toEqual([false, 'an error occured when call scribble: [Errno 27] File too large']);
    const cpu = Math.ceil(TOOL_TIMEOUT_MS / 1000) + 1;
    expect(JSON.parse(limits[1])).toEqual({
      RLIMIT_CPU: [cpu, cpu + 1],
      RLIMIT_AS: [2048 * 1024 ** 2, 2048 * 1024 ** 2],
      RLIMIT_FSIZE: [8 * 1024 ** 2, 8 * 1024 ** 2],
      RLIMIT_NPROC: [0, 0],
      RLIMIT_CORE: [0, 0],
    });
  }, 60_000);

  it('the CPU limit stops a tool that burns CPU before the wall clock does', async () => {
    if (!PY.python) return;
    const burn = 'def burn(x):\n    while True:\n        pass\n';
    // A 1 s CPU limit under a 20 s wall limit: SIGXCPU after about a second.
    const t0 = Date.now();
    const r = await runPythonToolProcess(PY.python, burn, 'burn', { x: 'a' }, 20_000, {
      addressSpaceMb: 2048,
      fileSizeMb: 8,
      cpuSeconds: 1,
    });
    expect(r).toEqual({
      ok: false,
      output: 'an error occured when call burn: the Python tool process stopped (SIGXCPU)',
    });
    expect(Date.now() - t0).toBeLessThan(10_000);
  }, 30_000);

  it('run by an unprivileged user, a tool still cannot start a process (the audit hook; RLIMIT_NPROC 0 under it)', async () => {
    if (!PY.python) return;
    const isRoot = process.getuid?.() === 0;
    const hasSetpriv = spawnSync('setpriv', ['--version'], { stdio: 'ignore' }).status === 0;
    if (!isRoot) {
      // Already unprivileged: the server runs as we are.
    } else if (!hasSetpriv) {
      console.warn(
        'ftrlExport.test.ts: RLIMIT_NPROC not checked: running as root without setpriv (Linux does not apply it to root)',
      );
      return;
    }
    // As root, the server runs as nobody (65534), which must read the export.
    if (isRoot) for (const p of [root, dir, path.join(dir, 'pact_verl')]) chmodSync(p, 0o755);
    const task = containTask();
    const server = startServer(PY.python, isRoot ? { asUser: 65534 } : {});
    const [spawnAnswer, whereAnswer] = await askToolServer(server, [
      request(task, { name: 'spawn', arguments: { x: 'a' } }),
      request(task, { name: 'where', arguments: { x: 'a' } }),
    ]);
    server.stdin.end();
    expect(spawnAnswer).toEqual([
      false,
      'an error occured when call spawn: subprocess.Popen is refused in the tool sandbox (no new processes)',
    ]);
    expect(whereAnswer[0]).toBe(true); // the tool itself ran
  }, 30_000);
});

/** FTRL's own test file, when this checkout has it: $PACT_FTRL_TASKS, else ../shared/data/ftrl/test.jsonl. */
const FTRL_FILE = process.env.PACT_FTRL_TASKS ?? path.join('..', 'shared', 'data', 'ftrl', 'test.jsonl');

describe("on FTRL's own test file (read in place, never copied)", () => {
  it('every tool of its first 20 tasks answers as in the app, with each required argument given', async () => {
    if (!existsSync(FTRL_FILE) || !PY.python) {
      console.warn(
        `ftrlExport.test.ts: FTRL's own tools not checked: ${PY.python ? `no ${FTRL_FILE} (set PACT_FTRL_TASKS)` : PY.reason}`,
      );
      return;
    }
    const config = resolveConfig({
      recipe: 'ftrl',
      seed: 1,
      tasks: { source: 'ftrl', path: FTRL_FILE, trainFraction: 0.75, nTrain: 8, nTest: 4 },
      steps: 2,
      batchPrompts: 2,
      miniBatchPrompts: 1,
    });
    const out = path.join(root, 'real');
    const realConfig = path.join(root, 'real.json');
    writeFileSync(realConfig, JSON.stringify({ name: 'real', base: config, runs: [{ name: 'ftrl' }], seeds: [1] }));
    const real = await exportVerl({ configPath: realConfig, outDir: out });
    const split = splitFtrlTasks({
      train: { name: FTRL_FILE, text: readFileSync(FTRL_FILE, 'utf8') },
      tasks: config.tasks,
    });
    expect(real.trainTasks).toEqual(split.train.map((t) => t.task));
    expect(real.testTasks).toEqual(split.test.map((t) => t.task));
    // Arguments from each schema: the first enum value, else a value of the declared type.
    const pick = (p: { type?: unknown; enum?: unknown[] }): unknown =>
      p.enum
        ? p.enum[0]
        : (({ integer: 3, number: 2.5, boolean: true, array: [], object: {} } as Record<string, unknown>)[
            String(p.type)
          ] ?? 'Paris');
    const tasks = readFtrlTaskFile(readFileSync(FTRL_FILE, 'utf8'))
      .items.slice(0, 20)
      .map((t) => t.task);
    const requests = tasks.flatMap((task) =>
      task.tools.map((tool) => {
        const props = tool.function.parameters.properties;
        const args = Object.fromEntries(
          (tool.function.parameters.required ?? []).map((k) => [k, pick(props[k] ?? {})]),
        );
        return { name: tool.function.name, arguments: args, tools: task.tools, implementations: task.implementations };
      }),
    );
    const app = new LanguageRoutingExecutor({ python: createNodePyodideExecutor({ timeoutMs: 5000 }) });
    const expected: [boolean, string][] = [];
    try {
      for (const r of requests) {
        const a = await answerToolCall(r, app);
        expected.push([a.ok, a.output]);
      }
    } finally {
      app.dispose();
    }
    expect(expected.filter(([ok]) => ok).length).toBeGreaterThan(requests.length / 2);
    const server = startServer(PY.python, { dir: out });
    const answers = await askToolServer(
      server,
      requests.map((r) => ({ ...r, timeout_ms: 5000 })),
    );
    server.stdin.end();
    expect(answers).toEqual(expected);
  }, 300_000);
});
