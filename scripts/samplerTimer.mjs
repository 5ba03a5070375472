// The engine's sampler alone (sampleRows, assembly/sampler.ts), two builds of the kernels side by
// side in one process: their calls alternate, best of 7 × 20 calls each, and their outputs are
// compared. Not a test; used for bench/2026-12-05-sampler-e2x.txt.
//   node scripts/samplerTimer.mjs OLD.ts [NEW.ts]   (kernelsWasm.ts files; NEW defaults to the tree's)
//   e.g. git show HEAD~1:src/model/engine/kernelsWasm.ts > /tmp/old.ts && node scripts/samplerTimer.mjs /tmp/old.ts
import { readFileSync } from 'node:fs';

/** The plain build's bytes from a kernelsWasm.ts file. */
function plainBuild(file) {
  const text = readFileSync(file, 'utf8');
  const rest = text.slice(text.indexOf('export const KERNELS_WASM_BASE64 =') + 10);
  const parts = [...rest.slice(0, rest.indexOf(';')).matchAll(/'([A-Za-z0-9+/=]*)'/g)].map((m) => m[1]);
  return Buffer.from(parts.join(''), 'base64');
}

const Z = 1 << 24; // logits [8, V] float32
const U = 1 << 23; // the draws, float64
const WORK = 1 << 22;
const OUT = 1 << 21;

async function load(file) {
  const memory = new WebAssembly.Memory({ initial: 4096 });
  const { instance } = await WebAssembly.instantiate(plainBuild(file), { env: { memory, abort() {} } });
  const z = new Float32Array(memory.buffer, Z, 8 * 4096);
  let s = 1;
  for (let i = 0; i < z.length; i++) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    z[i] = (s / 2 ** 32) * 12 - 8;
  }
  const u = new Float64Array(memory.buffer, U, 8);
  for (let r = 0; r < 8; r++) u[r] = r === 3 ? -1 : (r + 0.5) / 8; // row 3 greedy
  return { k: instance.exports, memory };
}

function bestMs(fn) {
  for (let r = 0; r < 20; r++) fn();
  let best = Infinity;
  for (let r = 0; r < 7; r++) {
    const t = performance.now();
    for (let j = 0; j < 20; j++) fn();
    best = Math.min(best, (performance.now() - t) / 20);
  }
  return best;
}

const [oldFile, newFile = new URL('../src/model/engine/kernelsWasm.ts', import.meta.url).pathname] =
  process.argv.slice(2);
if (!oldFile) {
  console.error('usage: node scripts/samplerTimer.mjs OLD_kernelsWasm.ts [NEW_kernelsWasm.ts]');
  process.exit(2);
}
const builds = { old: await load(oldFile), new: await load(newFile) };
for (const [V, limit] of [
  [4096, 4096],
  [1022, 1022],
  [4096, 4000],
]) {
  const times = { old: [], new: [] };
  for (let round = 0; round < 3; round++)
    for (const b of ['old', 'new']) times[b].push(bestMs(() => builds[b].k.sampleRows(Z, 8, V, limit, U, WORK, OUT)));
  const outputs = ['old', 'new'].map((b) => new Float64Array(builds[b].memory.buffer, OUT, 48).join(','));
  const exps = 8 * (limit + (limit < V ? V : 0));
  const ns = (b) => (Math.min(...times[b]) * 1e6) / exps;
  console.log(
    `sampleRows 8 × V ${V} limit ${limit}: old ${ns('old').toFixed(2)} ns an e^x, new ${ns('new').toFixed(2)}; ` +
      `${(ns('old') / ns('new')).toFixed(2)}×; same output: ${outputs[0] === outputs[1]}`,
  );
}
