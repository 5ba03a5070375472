/**
 * The smallest real training run the e2e specs start through the run setup: the form's
 * fields plus config overrides (JSON in the URL) that keep a wasm step to seconds, not
 * minutes: one turn of at most 24 generated tokens, four single-hop train tasks, one test
 * task, no held-out evaluation. Everything else is the recipe's real step (rollouts,
 * rewards, π_old(c^h), PPO updates, checkpoints).
 */
export const TINY_OVERRIDES = {
  maxTurns: 1,
  maxResponseTokens: 24,
  tasks: { source: 'generated', trainSeed: 1, testSeed: 2, nTrain: 4, nTest: 1, categories: ['single_hop'] },
  evalEvery: 0,
} as const;

/** `/?<form fields>&overrides=<TINY_OVERRIDES merged with extra>`. */
export function tinyRunUrl(form: Record<string, string>, extra: Record<string, unknown> = {}): string {
  return `/?${new URLSearchParams({ ...form, overrides: JSON.stringify({ ...TINY_OVERRIDES, ...extra }) })}`;
}

/**
 * One PACT step on wasm with the smallest batch; q = 0, so every prompt takes the trace route
 * (L^h + SFT) and there is a gradient even when the rewards tie.
 */
export const ONE_STEP_WASM_URL = tinyRunUrl({
  recipe: 'pact',
  steps: '1',
  K: '2',
  batch: '1',
  miniBatch: '1',
  q: '0',
  backend: 'wasm',
});
