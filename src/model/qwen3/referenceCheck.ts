/**
 * Browser-safe comparison of this Qwen3 with the PyTorch reference fixtures
 * (scripts/reference/qwen3_reference.py → fixtures/NAME.json + NAME.bin), for the
 * WebGPU check in Chromium: the page fetches the two files, calls
 * parseReferenceFixture and checkAgainstReference on the active backend, and asserts
 * on the returned errors (thresholds: logits < 1e-4 relative to scale,
 * gradients < 1e-3). No Node imports.
 */
import * as tf from './tf';
import { parseQwen3Config, type Qwen3Config } from './config';
import { computeQwen3Logits, disposeParams, loadQwen3Params, type HostTensor } from './model';
import { computeTokenLogprobs } from './logprobs';
import { generateQwen3 } from './generate';
import { runEngineGradients } from './engineSession';

export interface ReferenceFixture {
  config: Qwen3Config;
  scalars: Record<string, number>;
  tensors: Map<string, HostTensor>;
}

interface FixtureManifest {
  config: unknown;
  scalars: Record<string, number>;
  tensors: Array<{ name: string; shape: number[]; offset: number; length: number }>;
}

/** Parses a fixture from its manifest (parsed JSON) and .bin bytes (little-endian float32). */
export function parseReferenceFixture(manifest: unknown, bin: ArrayBuffer | Uint8Array): ReferenceFixture {
  const m = manifest as FixtureManifest;
  if (!m || typeof m !== 'object' || !Array.isArray(m.tensors))
    throw new Error('fixture manifest: expected {config, scalars, tensors[]}');
  const bytes = bin instanceof Uint8Array ? bin : new Uint8Array(bin);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const count = Math.floor(bytes.byteLength / 4);
  const tensors = new Map<string, HostTensor>();
  for (const t of m.tensors) {
    if (!(t.offset >= 0 && t.length >= 0 && t.offset + t.length <= count)) {
      throw new Error(
        `fixture tensor '${t.name}': floats [${t.offset}, ${t.offset + t.length}) outside the ${count} in the .bin`,
      );
    }
    const data = new Float32Array(t.length);
    for (let i = 0; i < t.length; i++) data[i] = view.getFloat32(4 * (t.offset + i), true);
    tensors.set(t.name, { shape: t.shape, data });
  }
  return { config: parseQwen3Config(m.config), scalars: m.scalars ?? {}, tensors };
}

export interface ReferenceCheckResult {
  backend: string;
  /** max |logit − ref| / max |ref| over real tokens. */
  logitsRelErr: number;
  /** max |log p − ref| over all target positions. */
  logprobsMaxErr: number;
  lossAbsErr: number;
  /** Per checked weight: max |g − ref| / max(1, max |ref|). */
  gradRelErr: Record<string, number>;
  /** Greedy KV-cache generation equals the reference tokens for every fixture prompt. */
  isGreedyEqual: boolean;
}

function getTensor(fx: ReferenceFixture, name: string): HostTensor {
  const t = fx.tensors.get(name);
  if (!t) throw new Error(`fixture lacks tensor '${name}'`);
  return t;
}

/** Runs the fixture's batch through the model on the active backend and measures the errors. */
export async function checkAgainstReference(fx: ReferenceFixture): Promise<ReferenceCheckResult> {
  const params = loadQwen3Params(fx.config, fx.tensors);
  const [B, T] = getTensor(fx, 'input_ids').shape;
  const V = fx.config.vocab_size;
  const maskData = getTensor(fx, 'attention_mask').data;
  const ids = tf.tensor2d(Array.from(getTensor(fx, 'input_ids').data), [B, T], 'int32');
  const mask = tf.tensor2d(maskData, [B, T]);
  try {
    const logits = computeQwen3Logits(params, fx.config, ids, mask);
    const got = await logits.data();
    logits.dispose();
    const ref = getTensor(fx, 'logits').data;
    let err = 0;
    let scale = 0;
    for (let i = 0; i < ref.length; i++) {
      if (maskData[Math.floor(i / V)] !== 1) continue;
      err = Math.max(err, Math.abs(got[i] - ref[i]));
      scale = Math.max(scale, Math.abs(ref[i]));
    }
    const lossFn = () =>
      tf.tidy(() => {
        const out = computeTokenLogprobs(params, fx.config, ids, mask);
        return out.logprobs.sum().neg().div(out.targetMask.sum()) as tf.Scalar;
      });
    const out = computeTokenLogprobs(params, fx.config, ids, mask);
    const lp = await out.logprobs.data();
    tf.dispose([out.logprobs, out.targetMask]);
    const refLp = getTensor(fx, 'token_logprobs').data;
    let lpErr = 0;
    for (let i = 0; i < refLp.length; i++) lpErr = Math.max(lpErr, Math.abs(lp[i] - refLp[i]));
    const { value, grads } = runEngineGradients(() => tf.variableGrads(lossFn, [...params.values()]));
    const loss = (await value.data())[0];
    const gradRelErr: Record<string, number> = {};
    for (const key of fx.tensors.keys()) {
      if (!key.startsWith('grad:')) continue;
      const name = key.slice(5);
      const g = await grads[params.get(name)!.name].data();
      const r = getTensor(fx, key).data;
      let e = 0;
      let s = 0;
      for (let i = 0; i < r.length; i++) {
        e = Math.max(e, Math.abs(g[i] - r[i]));
        s = Math.max(s, Math.abs(r[i]));
      }
      gradRelErr[name] = e / Math.max(1, s);
    }
    tf.dispose([value, ...Object.values(grads)]);
    let isGreedyEqual = true;
    const prompts: number[][] = [];
    const expectations: number[][] = [];
    for (let i = 0; fx.tensors.has(`greedy:${i}`); i++) {
      const prompt = Array.from(getTensor(fx, `greedy_prompt:${i}`).data);
      const expected = Array.from(getTensor(fx, `greedy:${i}`).data);
      const [row] = await generateQwen3(params, fx.config, [prompt], { maxNewTokens: expected.length, temperature: 0 });
      isGreedyEqual &&= row.tokens.length === expected.length && row.tokens.every((t, j) => t === expected[j]);
      prompts.push(prompt);
      expectations.push(expected);
    }
    if (prompts.length > 1 && expectations.every((e) => e.length === expectations[0].length)) {
      // The same prompts in one batch, left-padded, the graph's prefill one row at a time (the
      // chunks a GPU's buffer limit makes at larger sizes; the CPU engine takes no chunks).
      const rows = await generateQwen3(params, fx.config, prompts, {
        maxNewTokens: expectations[0].length,
        temperature: 0,
        prefillBytes: 1,
      });
      isGreedyEqual &&= rows.every(
        (row, i) =>
          row.tokens.length === expectations[i].length && row.tokens.every((t, j) => t === expectations[i][j]),
      );
    }
    return {
      backend: tf.getBackend(),
      logitsRelErr: err / scale,
      logprobsMaxErr: lpErr,
      lossAbsErr: Math.abs(loss - fx.scalars.loss),
      gradRelErr,
      isGreedyEqual,
    };
  } finally {
    tf.dispose([ids, mask]);
    disposeParams(params);
  }
}
