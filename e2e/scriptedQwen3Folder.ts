/**
 * A Qwen3 folder that always makes one tool call, for the e2e specs that need a policy to call
 * a tool (ftrlTrain.spec.ts, bfclEval.spec.ts): Qwen3's full vocabulary (151,669 tokens), hidden
 * 24, 2 layers, untied head, 8,192 positions. Its weights are random except for what makes it
 * call: the attention and MLP outputs (o_proj, down_proj) are zero, so the last hidden state is
 * the token's embedding, and the embeddings and LM head form a chain ("bigram" weights) whose
 * every sampled turn is `call` then `<|im_end|>`, each of the call's tokens predicting the next
 * with a logit of 45 against 0 for every other token. A purely random policy would call nothing.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { listQwen3ParamShapes, type Qwen3Config } from '../src/model/qwen3/config';
import { loadQwen3TokenizerFromPackage } from '../src/model/tokenizer/nodeLoader';
import { saveQwen3Folder } from '../src/model/weights/qwen3Folder';

const END = '<|im_end|>';

/** Writes the scripted folder (its config.json and model.safetensors) into `dir`; `call`'s tokens must be distinct. */
export async function writeScriptedFolder(dir: string, call: string): Promise<void> {
  const tokenizer = await loadQwen3TokenizerFromPackage();
  const chain = tokenizer.encode(call);
  const [end] = tokenizer.encode(END);
  if (new Set(chain).size !== chain.length) throw new Error('the call must be distinct tokens');
  const H = 24;
  const config: Qwen3Config = {
    vocab_size: tokenizer.vocabSize,
    hidden_size: H,
    intermediate_size: 64,
    num_hidden_layers: 2,
    num_attention_heads: 2,
    num_key_value_heads: 1,
    head_dim: 16,
    rms_norm_eps: 1e-6,
    rope_theta: 10000,
    tie_word_embeddings: false,
    max_position_embeddings: 8192,
  };
  // RMSNorm of a one-hot row is √H on its axis: a logit of 45 needs a weight of 45 / √H.
  const weight = 45 / Math.sqrt(H);
  // Axis 0: every token outside the call (the prompt's last "\n" included) → the call's first;
  // axis k + 1: the call's k-th token → the next one, the last → <|im_end|>.
  const next = [...chain, end];
  const tensors = [...listQwen3ParamShapes(config)].map(([name, shape]) => {
    const data = new Float32Array(shape.reduce((a, b) => a * b, 1));
    if (name === 'model.embed_tokens.weight') {
      for (let t = 0; t < config.vocab_size; t++) data[t * H] = 1;
      chain.forEach((t, k) => {
        data[t * H] = 0;
        data[t * H + k + 1] = 1;
      });
    } else if (name === 'lm_head.weight') {
      next.forEach((t, k) => (data[t * H + k] = weight));
    } else if (name.endsWith('norm.weight')) data.fill(1);
    else if (!name.endsWith('o_proj.weight') && !name.endsWith('down_proj.weight'))
      for (let i = 0; i < data.length; i++) data[i] = 0.02 * Math.sin(7 * i + name.length);
    return { name, shape, data };
  });
  mkdirSync(dir, { recursive: true });
  for (const [file, content] of Object.entries(saveQwen3Folder({ config, tensors })))
    writeFileSync(path.join(dir, file), content);
}
