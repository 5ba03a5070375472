/**
 * What the app will show but does not yet. The "Still to come" panel
 * reads this list, so the page says plainly what is not built yet. Built so far:
 * Device, Run setup (with the training buttons, and training on a loaded FTRL file), Live charts,
 * Rollout inspector, Runs (resume, delete, metrics and checkpoint export, checkpoint import), Task
 * files (with a policy's FTRL evaluation), Mask schedule, Anchoring gates, Prefix levels L0–L4,
 * Token masks.
 */
export interface PlannedPanel {
  name: string;
  what: string;
}

export const PLANNED_PANELS: readonly PlannedPanel[] = [
  {
    name: 'A warm start for the search recipes',
    what: 'the shipped warm start has never searched, so toolsearcher, search_r1, gspo and gdpo runs from it select no tools (F1 0); training one (npm run pretrain -- --search-tasks N) takes minutes on a GPU and, estimated from measured training rates, about 1.7 hours on 2 CPU cores with the lean PyTorch script or 3 hours on the CPU engine (not yet run)',
  },
  {
    name: 'Checkpoints of large models in the page',
    what:
      'the app saves a checkpoint as one IndexedDB record after every step, and Chromium refuses a record over 127 MiB: ' +
      "a model past about 8 M parameters (weights, AdamW's two moments and π_ref, 16 bytes a parameter; LoRA 8) stops at " +
      'its first checkpoint, after step 1. So a real Qwen3 folder (Qwen3-0.6B: 596 M parameters), which FTRL files need ' +
      'for their 506–6,447-token prompts, cannot yet train here (Run setup warns before Train); pact train can. ' +
      'Checkpoints written in pieces would lift it',
  },
  {
    name: 'A memory check on WebGPU',
    what: "on wasm and the CPU engine a run whose step cannot fit (training state, the rollouts' KV cache, kept activations) is refused before it starts, with the estimate and the fields to change; on WebGPU the adapter's limits are not checked yet, so a run there can still fail mid-step. A Quick step peaks near 300 MiB of engine buffers, a paper-size step (measured in Node on 2 cores: 69 s) near 550 MiB",
  },
];

/**
 * What a short run in this tab can and cannot show, on the home card: true to the measured
 * runs (docs/results.md), and changed only when they change.
 */
export const SHORT_RUN_NOTE =
  'What a short run shows: every part of the method at work (prompt-only rollouts, matched credit, the masks, the ' +
  'anchoring gate, the update), step by step. What it cannot show: whether PACT beats the warm start. Its reward ' +
  'swings by about ±0.2 from step to step at this size, more than a few steps of training move it; that question ' +
  'takes several seeds against a frozen copy of the warm start and 200 held-out tasks, which the project is ' +
  'measuring now (docs/results.md in the repository: no held-out gain over the warm start has been shown yet).';
