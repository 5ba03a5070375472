/**
 * The tool server of a VeRL export (bundled into DIR/pact_verl/tool_server.mjs by the
 * exporter; run with `node tool_server.mjs [--python PATH]`): one JSON request a line on
 * stdin, {id, name, arguments, tools, implementations, timeout_ms?}, one JSON answer a line
 * on stdout, {id, ok, output}. Each call is answered as the app's RolloutEnv.step answers it:
 * the arguments checked against the task's schemas (checkToolCall), then the task's
 * JavaScript stub run by the app's own InProcessExecutor, or its Python source in a fresh
 * `PATH -I` process (default `python3`) with the app's Python runtime (pythonToolProcess.ts),
 * each within the request's time limit (2000 ms, the app's for stubs, when it names none).
 */
import { createInterface } from 'node:readline';
import { answerToolCall, createToolServerExecutor, type ToolRequest } from './toolAnswer';

const at = process.argv.indexOf('--python');
const executor = createToolServerExecutor(at >= 0 && process.argv[at + 1] ? process.argv[at + 1] : 'python3');
const rl = createInterface({ input: process.stdin, crlfDelay: Infinity });
let queue = Promise.resolve();
rl.on('line', (line) => {
  if (line.trim() === '') return;
  queue = queue.then(async () => {
    let id: unknown = null;
    try {
      const request = JSON.parse(line) as ToolRequest & { id?: unknown };
      id = request.id ?? null;
      const result = await answerToolCall(request, executor);
      process.stdout.write(JSON.stringify({ id, ...result }) + '\n');
    } catch (e) {
      process.stdout.write(JSON.stringify({ id, ok: false, output: `bad request: ${(e as Error).message}` }) + '\n');
    }
  });
});
