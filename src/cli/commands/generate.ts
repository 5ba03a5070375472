/**
 * `pact generate --model DIR --prompt TEXT [--max-new-tokens 64] [--temperature 0]
 *                [--top-p 1] [--seed 1] [--chat] [--backend cpu|wasm] [--json]`
 *
 * Continues a prompt with a Qwen3 folder (KV-cache generation, src/model/qwen3/generate).
 * Text goes through the folder's tokenizer files, or pruned_vocab.json + the installed Qwen3
 * tokenizer (the warm start: `--model public/warm-start`). `--chat` wraps the prompt as one
 * user message with Qwen3's chat template and the generation prompt. Sampling draws from the
 * project's seeded RNG, so the same seed gives the same text; temperature 0 is greedy.
 * Generation stops at `<|im_end|>` or `</answer>`, or after max-new-tokens.
 */
import { createRng } from '../../core/rng';
import { parseFlags, registerCommand, type CliIO } from '../registry';
import { loadModelFolder, prepareTfjs } from './score';

const USAGE = `usage: pact generate --model DIR --prompt TEXT [--max-new-tokens 64] [--temperature 0]
                    [--top-p 1] [--seed 1] [--chat] [--backend cpu|wasm] [--json]

Continues TEXT with the model in DIR (config.json + model.safetensors, plus tokenizer.json or
pruned_vocab.json). --chat renders TEXT as a user message with Qwen3's chat template.`;

export const GENERATE_STOP_STRINGS = ['<|im_end|>', '</answer>'];

function readNumber(
  flags: Record<string, string | boolean>,
  name: string,
  fallback: number,
  check: (v: number) => boolean,
  rule: string,
): number {
  const raw = flags[name];
  if (raw === undefined) return fallback;
  const v = Number(raw);
  if (typeof raw !== 'string' || raw.trim() === '' || !Number.isFinite(v) || !check(v)) {
    throw new Error(`--${name} must be ${rule}, got "${String(raw)}"`);
  }
  return v;
}

registerCommand({
  name: 'generate',
  summary: 'continue a prompt with a Qwen3 folder (greedy or seeded sampling, KV cache)',
  usage: USAGE,
  async run(args: string[], io: CliIO): Promise<number> {
    const { flags, positional } = parseFlags(args, {
      values: ['model', 'prompt', 'max-new-tokens', 'temperature', 'top-p', 'seed', 'backend'],
      booleans: ['chat', 'json'],
    });
    if (positional.length > 0) throw new Error(`unexpected argument "${positional[0]}"`);
    if (typeof flags.model !== 'string') throw new Error('--model DIR is required');
    if (typeof flags.prompt !== 'string') throw new Error('--prompt TEXT is required');
    const maxNewTokens = readNumber(
      flags,
      'max-new-tokens',
      64,
      (v) => Number.isInteger(v) && v >= 1,
      'a positive integer',
    );
    const temperature = readNumber(flags, 'temperature', 0, (v) => v >= 0, 'a number ≥ 0');
    const topP = readNumber(flags, 'top-p', 1, (v) => v > 0 && v <= 1, 'in (0, 1]');
    const seed = readNumber(flags, 'seed', 1, (v) => Number.isInteger(v), 'an integer');
    await prepareTfjs(typeof flags.backend === 'string' ? flags.backend : 'wasm');
    const { model, tokenizer } = await loadModelFolder(flags.model);
    try {
      if (!tokenizer) {
        throw new Error(
          `${flags.model} has no tokenizer.json and no pruned_vocab.json, and its vocab_size (${model.config.vocab_size}) is not Qwen3's: cannot encode text`,
        );
      }
      let text = flags.prompt;
      if (flags.chat === true) {
        const { loadQwen3TokenizerFromPackage } = await import('../../model/tokenizer/nodeLoader');
        const full = await loadQwen3TokenizerFromPackage();
        text = full.renderChat([{ role: 'user', content: text }], { addGenerationPrompt: true });
      }
      const promptIds = tokenizer.encode(text);
      if (promptIds.length === 0) throw new Error('--prompt encodes to no tokens');
      // A model with more embedding rows than the tokenizer has tokens can emit ids with no
      // text (spare rows of a pruned preset); they decode to nothing.
      const decode = (ids: number[]) => tokenizer.decode(ids.filter((id) => id < tokenizer.vocabSize));
      const rng = createRng(seed).split('generate');
      const imEnd = tokenizer.tokenId('<|im_end|>');
      const [row] = await model.generate([promptIds], {
        maxNewTokens,
        temperature,
        topP,
        random: () => rng.next(),
        stopStrings: GENERATE_STOP_STRINGS,
        stopTokenIds: imEnd !== undefined ? [[imEnd]] : undefined,
        decode,
      });
      const completion = decode(row.tokens);
      if (flags.json === true) {
        io.out(
          JSON.stringify({
            promptIds,
            tokens: row.tokens,
            logprobs: row.logprobs,
            finishReason: row.finishReason,
            text: completion,
          }),
        );
      } else {
        io.out(completion);
      }
    } finally {
      model.dispose();
    }
    return 0;
  },
});
