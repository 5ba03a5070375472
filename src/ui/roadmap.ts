/**
 * What the app will show but does not yet. The "Still to come" panel
 * reads this list, so the page says plainly what is not built yet. Built so far:
 * Device, Run setup (with the training buttons), Live charts, Rollout inspector, Runs
 * (resume, delete, metrics and checkpoint export, checkpoint import), Task files (with a policy's
 * FTRL evaluation), Mask schedule, Anchoring gates, Prefix levels L0–L4, Token masks.
 */
export interface PlannedPanel {
  name: string;
  what: string;
}

export const PLANNED_PANELS: readonly PlannedPanel[] = [
  {
    name: 'Training on a loaded FTRL file',
    what:
      'pact train trains on FTRL files (tasks.source "ftrl": a stated train / held-out split, Python tools in Pyodide, ' +
      'the ftrl and grpo recipes; docs/runs.md); the app does not yet: Train must send the loaded file with the start ' +
      'request, the trainer worker must read it and run its tools in Pyodide (as the evaluation does), and Run setup must ' +
      'show the split, the recipes that can run and how many prompts fit before Train. FTRL prompts are 506–6,447 tokens ' +
      "(median 3,934), over qwen3-nano's 2,048 and qwen3-micro's 4,096 positions, so it needs your own Qwen3 folder with " +
      'a window of at least about 7,000 tokens (Qwen3-0.6B) and WebGPU: on a CPU (wasm) rows that long are refused by the memory check',
  },
  {
    name: 'A warm start for the search recipes',
    what: 'the shipped warm start has never searched, so toolsearcher, search_r1, gspo and gdpo runs from it select no tools (F1 0); training one (npm run pretrain -- --search-tasks N) takes minutes on a GPU and, estimated from measured training rates, about 1.7 hours on 2 CPU cores with the lean PyTorch script or 3 hours on the CPU engine (not yet run)',
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
