/**
 * "Check numerics on this device": runs the committed PyTorch reference fixtures
 * (scripts/reference/qwen3_reference.py) through this Qwen3 on the chosen backend and
 * reports the errors against fixed thresholds (below). This is how a user (and the e2e
 * test) confirms that WebGPU on their machine computes the same model as PyTorch.
 */
import gqaManifestUrl from '../src/model/qwen3/fixtures/qwen3_gqa_untied.json?url';
import gqaBinUrl from '../src/model/qwen3/fixtures/qwen3_gqa_untied.bin?url';
import mqaManifestUrl from '../src/model/qwen3/fixtures/qwen3_mqa_tied.json?url';
import mqaBinUrl from '../src/model/qwen3/fixtures/qwen3_mqa_tied.bin?url';
import { checkAgainstReference, parseReferenceFixture } from '../src/model/qwen3/referenceCheck';
import type { BackendName } from '../src/model/backend';
import { configureEngineKernels } from '../src/model/engine/runtime';
import { activateBackend } from './tfBrowser';
import type { NumericsReport } from './protocol';

/** Logits within 1e-4 relative to scale, gradients within 1e-3. */
export const LOGITS_TOLERANCE = 1e-4;
export const GRADIENT_TOLERANCE = 1e-3;

const FIXTURES = [
  { name: 'GQA, untied head, padded batch', manifestUrl: gqaManifestUrl, binUrl: gqaBinUrl },
  { name: 'MQA, tied head, padded batch', manifestUrl: mqaManifestUrl, binUrl: mqaBinUrl },
];

async function fetchOk(url: string): Promise<Response> {
  const res = await fetch(url);
  if (!res.ok) throw new Error(`could not load the reference fixture ${url}: HTTP ${res.status}`);
  return res;
}

export async function checkNumerics(preferred: BackendName): Promise<NumericsReport> {
  const selection = await activateBackend(preferred);
  await configureEngineKernels('simd'); // the default kernels, whatever a run before asked for
  const cases: NumericsReport['cases'] = [];
  for (const fx of FIXTURES) {
    const [manifest, bin] = await Promise.all([
      fetchOk(fx.manifestUrl).then((r) => r.json()),
      fetchOk(fx.binUrl).then((r) => r.arrayBuffer()),
    ]);
    const r = await checkAgainstReference(parseReferenceFixture(manifest, bin));
    const gradMax = Math.max(...Object.values(r.gradRelErr));
    cases.push({
      name: fx.name,
      logitsRelErr: r.logitsRelErr,
      gradMaxRelErr: gradMax,
      isGreedyEqual: r.isGreedyEqual,
      isPass: r.logitsRelErr < LOGITS_TOLERANCE && gradMax < GRADIENT_TOLERANCE && r.isGreedyEqual,
    });
  }
  return { backend: selection.backend, fallbackReason: selection.reason, cases };
}
