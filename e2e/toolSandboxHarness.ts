// Bundled by e2e/toolSandbox.spec.ts into a script the spec adds to the built app's page: the
// app's own sandbox executor, reachable from the test.
import { createWorkerExecutor } from '../src/envs/sandbox';

(globalThis as unknown as { pactToolSandbox: unknown }).pactToolSandbox = { createWorkerExecutor };
