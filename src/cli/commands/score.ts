/**
 * `pact score --model DIR --ids 1,2,3 [--json] [--backend cpu|wasm]`
 *
 * Loads a Qwen3 folder (config.json + model.safetensors, src/model/weights) and prints, for
 * each position t, log p(ids[t+1] | ids[≤t]) and the top-5 next tokens (ids, log-probs and,
 * when the folder has a tokenizer, their text). This is the check that a folder gives the
 * reference implementation's next-token distribution.
 *
 * Also the Node helpers the model commands share (generate.ts, bench.ts): the tfjs resolve
 * hook, backend selection and folder + tokenizer loading. The model code is imported
 * dynamically so that `pact --help` and the other commands never load tfjs.
 */
import { existsSync } from 'node:fs';
import { register } from 'node:module';
import { fileURLToPath } from 'node:url';
import type { Tensor2D } from '@tensorflow/tfjs-core';
import type { KernelVariant } from '../../model/engine/kernelChoice';
import type { Qwen3Model } from '../../model/qwen3/index';
import type { TextTokenizer } from '../../model/tokenizer/types';
import { parseFlags, registerCommand, type CliIO } from '../registry';

const USAGE = `usage: pact score --model DIR --ids 1,2,3 [--json] [--backend cpu|wasm]

For each position t of the id sequence: the log-prob of the next id ids[t+1] and the
top-5 next tokens (with their text when the folder has a tokenizer or pruned_vocab.json).
DIR holds config.json + model.safetensors (or a sharded index), as Hugging Face writes them.`;

let isHookRegistered = false;

/** Engine threads for the CLI: --threads N, else $PACT_THREADS, else `fallback`. */
export function resolveThreads(flag: string | undefined, fallback: number): number {
  const text = flag ?? process.env.PACT_THREADS;
  if (text === undefined) return fallback;
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1 || n > 256) throw new Error(`--threads must be an integer in 1…256, got "${text}"`);
  return n;
}

/** The CPU engine's fused multiply-add kernels for the CLI: --fma, else $PACT_FMA=1 (docs/engine.md). */
export function resolveFma(flag: boolean | undefined): boolean {
  return flag === true || process.env.PACT_FMA === '1';
}

/**
 * Registers src/model/qwen3/nodeResolveHook.mjs (tfjs-core's ESM sources under plain Node;
 * not needed under vitest, which resolves them itself, nor in a bundled CLI, which has no
 * such file) and selects the backend. webgpu: Dawn's binding first (../webgpuNode.ts).
 * `isFma`: ask for the CPU engine's relaxed-SIMD kernels; `kernels` says which run, and
 * `kernelsWarning` why they are not the ones asked for (relaxed SIMD missing: the plain ones).
 */
export async function prepareTfjs(
  backend: string,
  options: { threads?: number; isFma?: boolean } = {},
): Promise<{ backend: string; reason?: string; threads?: number; kernels?: KernelVariant; kernelsWarning?: string }> {
  if (backend !== 'cpu' && backend !== 'wasm' && backend !== 'webgpu')
    throw new Error(`--backend must be cpu, wasm or webgpu, got "${backend}"`);
  const hook = new URL('../../model/qwen3/nodeResolveHook.mjs', import.meta.url);
  if (!isHookRegistered && process.env.VITEST === undefined && existsSync(fileURLToPath(hook))) {
    register(hook);
    isHookRegistered = true;
  }
  if (backend === 'webgpu') {
    const { installNodeWebGpu } = await import('../webgpuNode');
    const why = await installNodeWebGpu();
    if (why) return { backend: 'none', reason: why };
  }
  const { selectBackend } = await import('../../model/backend');
  const { getNodeWasmPaths } = await import('../../model/qwen3/node');
  const sel = await selectBackend(backend, { wasmPaths: getNodeWasmPaths() });
  let kernels: { kernels: KernelVariant; warning?: string } | undefined;
  if (options.isFma) {
    // Before the threads: they create the engine's runtime with the kernels chosen here.
    const { configureEngineKernels } = await import('../../model/engine/runtime');
    kernels = await configureEngineKernels('fma');
  }
  let threads: number | undefined;
  if (options.threads !== undefined && options.threads > 1) {
    // The CPU engine's threads (src/model/engine/threads.ts); the numbers do not depend on them.
    const { configureEngineThreads } = await import('../../model/engine/runtime');
    threads = (await configureEngineThreads(options.threads)).threads;
  }
  return {
    backend: sel.backend,
    reason: sel.reason,
    threads,
    kernels: kernels?.kernels,
    kernelsWarning: kernels?.warning,
  };
}

export interface LoadedModelFolder {
  model: Qwen3Model;
  /** The folder's tokenizer, the package tokenizer over pruned_vocab.json, or undefined. */
  tokenizer?: TextTokenizer;
}

/**
 * Loads a model folder in Node: weights into a Qwen3Model, and a tokenizer from the
 * folder's tokenizer.json (+ pruned_vocab.json when present), else from the installed
 * Qwen3 tokenizer package when the folder has pruned_vocab.json or Qwen3's full vocabulary.
 */
export async function loadModelFolder(dir: string): Promise<LoadedModelFolder> {
  const { createNodeFolderReader } = await import('../../model/weights/nodeFiles');
  const { loadQwen3Folder } = await import('../../model/weights/qwen3Folder');
  const { Qwen3Model } = await import('../../model/qwen3/index');
  const { createQwen3Tokenizer } = await import('../../model/tokenizer/qwen3Tokenizer');
  const { loadQwen3TokenizerFromPackage } = await import('../../model/tokenizer/nodeLoader');
  const { PrunedTokenizer } = await import('../../model/tokenizer/prunedVocab');
  const folder = await loadQwen3Folder(createNodeFolderReader(dir));
  const model = Qwen3Model.fromTensors(folder.config, folder.tensors);
  let full;
  if (folder.tokenizerFiles)
    full = createQwen3Tokenizer(folder.tokenizerFiles.tokenizerJson, folder.tokenizerFiles.tokenizerConfig);
  else if (folder.prunedVocab || folder.config.vocab_size >= 151_669) full = await loadQwen3TokenizerFromPackage();
  let tokenizer: TextTokenizer | undefined = full;
  if (full && folder.prunedVocab) tokenizer = new PrunedTokenizer(full, folder.prunedVocab);
  if (tokenizer && tokenizer.vocabSize > folder.config.vocab_size) {
    // A full tokenizer beside a smaller test model: ids past vocab_size cannot be scored.
    tokenizer = undefined;
  }
  return { model, tokenizer };
}

/** Parses `--ids 1,2,3` (comma- or space-separated non-negative integers below vocabSize). */
export function parseIdList(text: string, vocabSize: number): number[] {
  const parts = text.split(/[\s,]+/).filter((p) => p.length > 0);
  if (parts.length < 1) throw new Error('--ids: expected at least one token id');
  return parts.map((p, i) => {
    if (!/^\d+$/.test(p)) throw new Error(`--ids: item ${i} ("${p}") is not a non-negative integer`);
    const id = Number(p);
    if (id >= vocabSize) throw new Error(`--ids: item ${i} (${id}) is not below vocab_size ${vocabSize}`);
    return id;
  });
}

export interface TopToken {
  id: number;
  logprob: number;
  text?: string;
}

export interface ScoredPosition {
  position: number;
  id: number;
  /** log p(ids[t+1] | ids[≤t]); absent at the last position. */
  nextId?: number;
  nextLogprob?: number;
  top: TopToken[];
}

/** Log-softmax over each position's logits, then the next id's log-prob and the top-k. */
export async function scoreIds(
  model: Qwen3Model,
  ids: number[],
  topK = 5,
  tokenizer?: TextTokenizer,
): Promise<ScoredPosition[]> {
  const tf = await import('../../model/qwen3/tf');
  const V = model.config.vocab_size;
  const logprobs = tf.tidy(() => {
    const inputIds = tf.tensor2d(ids, [1, ids.length], 'int32');
    const mask = tf.ones([1, ids.length]) as Tensor2D;
    return tf.logSoftmax(model.computeLogits(inputIds, mask).reshape([ids.length, V])); // [T, V]
  });
  const data = (await logprobs.data()) as Float32Array;
  logprobs.dispose();
  const out: ScoredPosition[] = [];
  for (let t = 0; t < ids.length; t++) {
    const row = data.subarray(t * V, (t + 1) * V);
    const order = Array.from({ length: V }, (_, i) => i)
      .sort((a, b) => row[b] - row[a] || a - b)
      .slice(0, topK);
    const pos: ScoredPosition = {
      position: t,
      id: ids[t],
      // Ids past a pruned tokenizer's size (a model with spare embedding rows) have no text.
      top: order.map((id) => ({
        id,
        logprob: row[id],
        ...(tokenizer && id < tokenizer.vocabSize ? { text: tokenizer.decode([id]) } : {}),
      })),
    };
    if (t + 1 < ids.length) {
      pos.nextId = ids[t + 1];
      pos.nextLogprob = row[ids[t + 1]];
    }
    out.push(pos);
  }
  return out;
}

function formatTop(top: TopToken[]): string {
  return top
    .map((x) => `${x.id}${x.text !== undefined ? ` ${JSON.stringify(x.text)}` : ''} ${x.logprob.toFixed(4)}`)
    .join(' | ');
}

registerCommand({
  name: 'score',
  summary: 'log-prob of each next token id and the top-5 next tokens of a Qwen3 folder',
  usage: USAGE,
  async run(args: string[], io: CliIO): Promise<number> {
    const { flags, positional } = parseFlags(args, { values: ['model', 'ids', 'backend'], booleans: ['json'] });
    if (positional.length > 0) throw new Error(`unexpected argument "${positional[0]}"`);
    if (typeof flags.model !== 'string') throw new Error('--model DIR is required');
    if (typeof flags.ids !== 'string') throw new Error('--ids 1,2,3 is required');
    await prepareTfjs(typeof flags.backend === 'string' ? flags.backend : 'cpu');
    const { model, tokenizer } = await loadModelFolder(flags.model);
    try {
      const ids = parseIdList(flags.ids, model.config.vocab_size);
      const scored = await scoreIds(model, ids, 5, tokenizer);
      if (flags.json === true) {
        io.out(JSON.stringify({ ids, positions: scored }));
      } else {
        io.out('pos  id      next    log p(next)  top-5 next (id text log p)');
        for (const s of scored) {
          const next =
            s.nextId !== undefined
              ? `${String(s.nextId).padEnd(7)} ${s.nextLogprob!.toFixed(4).padStart(11)}`
              : `${'-'.padEnd(7)} ${'-'.padStart(11)}`;
          io.out(`${String(s.position).padEnd(4)} ${String(s.id).padEnd(7)} ${next}  ${formatTop(s.top)}`);
        }
        const nll = scored.filter((s) => s.nextLogprob !== undefined).map((s) => -s.nextLogprob!);
        if (nll.length > 0) io.out(`mean next-token loss: ${(nll.reduce((a, b) => a + b, 0) / nll.length).toFixed(6)}`);
      }
    } finally {
      model.dispose();
    }
    return 0;
  },
});
