/**
 * LoRA's names, without tfjs (so page code such as src/run/checkpoint.ts can use them):
 * the target modules, the Hugging Face weight each adapts, and the PEFT-style names of an
 * adapter's A and B. lora.ts builds the adapters on these and re-exports them.
 */
export type LoraTarget = 'q' | 'k' | 'v' | 'o' | 'gate' | 'up' | 'down';

/** The Hugging Face weight-name suffix each target module adapts. */
export const LORA_TARGET_SUFFIX: Readonly<Record<LoraTarget, string>> = {
  q: 'self_attn.q_proj.weight',
  k: 'self_attn.k_proj.weight',
  v: 'self_attn.v_proj.weight',
  o: 'self_attn.o_proj.weight',
  gate: 'mlp.gate_proj.weight',
  up: 'mlp.up_proj.weight',
  down: 'mlp.down_proj.weight',
};

export const LORA_TARGETS: readonly LoraTarget[] = Object.keys(LORA_TARGET_SUFFIX) as LoraTarget[];

/** PEFT-style names of the A and B matrices adapting `weightName` (`….q_proj.weight`). */
export function nameLoraWeights(weightName: string): { a: string; b: string } {
  const base = weightName.endsWith('.weight') ? weightName.slice(0, -'.weight'.length) : weightName;
  return { a: `${base}.lora_A.weight`, b: `${base}.lora_B.weight` };
}
