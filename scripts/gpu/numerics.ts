/**
 * The PyTorch reference fixtures (src/model/qwen3/fixtures, scripts/reference/qwen3_reference.py)
 * through the tfjs Qwen3 on one backend in Node, as one JSON line: which backend ran, and per
 * fixture the logits' and gradients' relative errors and whether greedy tokens match (thresholds:
 * 1e-4 and 1e-3). scripts/gpu/bench.sh runs it on webgpu (Dawn) before timing, so a
 * GPU's figures are known to be the same model's.
 *
 *   node --import tsx scripts/gpu/numerics.ts [webgpu|wasm|cpu]   (or the bundled numerics.mjs),
 *   from the repository root (the fixtures are read from there).
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { prepareTfjs } from '../../src/cli/commands/score';

const FIXTURES = path.resolve('src/model/qwen3/fixtures');

const wanted = process.argv[2] ?? 'webgpu';
const selection = await prepareTfjs(wanted);
const tf = await import('../../src/model/qwen3/tf');
const { readReferenceFixture } = await import('../../src/model/qwen3/node');
const { checkAgainstReference } = await import('../../src/model/qwen3/referenceCheck');
const cases = [];
if (selection.backend === wanted) {
  for (const name of ['qwen3_gqa_untied', 'qwen3_mqa_tied']) {
    if (!existsSync(path.join(FIXTURES, `${name}.json`))) continue;
    const r = await checkAgainstReference(readReferenceFixture(FIXTURES, name));
    const gradMax = Math.max(...Object.values(r.gradRelErr));
    cases.push({
      name,
      logitsRelErr: r.logitsRelErr,
      gradMaxRelErr: gradMax,
      isGreedyEqual: r.isGreedyEqual,
      isPass: r.logitsRelErr < 1e-4 && gradMax < 1e-3 && r.isGreedyEqual,
    });
  }
}
console.log(JSON.stringify({ wanted, backend: tf.getBackend(), reason: selection.reason, cases }));
process.exitCode = cases.length > 0 && cases.every((c) => c.isPass) ? 0 : 1;
