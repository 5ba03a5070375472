/**
 * The tool server of a VeRL export (bundled into DIR/pact_verl/tool_server.mjs by the
 * exporter; run with `node tool_server.mjs`): one JSON request a line on stdin,
 * {id, name, arguments, tools, implementations}, one JSON answer a line on stdout,
 * {id, ok, output}. Each call is answered as the app's RolloutEnv.step answers it: the
 * arguments checked against the task's schemas (checkToolCall), then the task's JavaScript
 * stub run by the app's own InProcessExecutor with the app's time limit (2000 ms).
 */
import { createInterface } from 'node:readline';
import { answerToolCall, type ToolRequest } from './toolAnswer';

const rl = createInterface({ input: process.stdin, crlfDelay: Infinity });
let queue = Promise.resolve();
rl.on('line', (line) => {
  if (line.trim() === '') return;
  queue = queue.then(async () => {
    let id: unknown = null;
    try {
      const request = JSON.parse(line) as ToolRequest & { id?: unknown };
      id = request.id ?? null;
      const result = await answerToolCall(request);
      process.stdout.write(JSON.stringify({ id, ...result }) + '\n');
    } catch (e) {
      process.stdout.write(JSON.stringify({ id, ok: false, output: `bad request: ${(e as Error).message}` }) + '\n');
    }
  });
});
