/**
 * What the app will show but does not yet. The "Still to come" panel
 * reads this list, so the page says plainly what is not built yet. Built so far:
 * Device, Run setup (with the training buttons, and training on a loaded FTRL file), Live charts,
 * Rollout inspector, Runs (resume, delete, metrics and checkpoint export, checkpoint import), Task
 * files (with a policy's FTRL evaluation), Mask schedule, Anchoring gates, Prefix levels L0–L4,
 * Token masks, the measured Table 1 with the ablations and the ToolSearcher table (Home), and a
 * run refused before Train when the browser's storage quota cannot hold its checkpoints.
 */
export interface PlannedPanel {
  name: string;
  what: string;
}

export const PLANNED_PANELS: readonly PlannedPanel[] = [
  {
    name: "The GPU's own memory on WebGPU",
    what:
      "on wasm and the CPU engine a run whose step cannot fit (training state, the rollouts' KV cache, kept " +
      'activations) is refused before it starts, with the estimate and the fields to change. On WebGPU the ' +
      "adapter's per-buffer limits are checked the same way (a micro-batch's attention scores against " +
      "maxBufferSize and maxStorageBufferBindingSize; the rollouts' prompt is run in rows that fit), but WebGPU " +
      'does not say how much memory the GPU has, so a run larger than it can still fail mid-step. A Quick step ' +
      'peaks near 300 MiB of engine buffers, a paper-size step (measured in Node on 2 cores: 1 min) near 560 MiB',
  },
];

/**
 * What a short run in this tab can and cannot show, on the home card: true to the measured
 * runs (docs/results.md), and changed only when they change.
 */
export const SHORT_RUN_NOTE =
  'What a short run shows: every part of the method at work, step by step. What it cannot show: whether PACT ' +
  'beats the warm start (its reward swings by about ±0.2 from step to step). Measured with 5 seeds of 32 steps ' +
  'of 16 rollouts against a frozen copy (Table 1, linked below): the train reward pulls ahead after about 16 ' +
  'steps in every seed (+0.078 ± 0.017), but held out PACT is level with the warm start (−0.000 ± 0.015 Solve-F1) ' +
  'and with MatchTIR; the rows that add supervised steps on expert traces lead (SFT +0.083 ± 0.007), so the ' +
  "paper's ordering is not reproduced at this size.";

/**
 * The same for the search recipes (toolsearcher, search_r1, gspo, gdpo): what a short run shows,
 * and what their table (docs/results.md) found.
 */
export const SEARCH_SHORT_RUN_NOTE =
  'What a short run shows: every part of the method at work, step by step: the queries, the search rounds, ' +
  'the tools each rollout selects and the selection-F1 reward. What it cannot show: whether ToolSearcher beats ' +
  'Search-R1, GSPO, GDPO or the search warm start it starts from. The table that asks (experiments/toolsearcher.json: ' +
  '3 seeds of 32 steps, 200 held-out queries) found every RL row 0.008 to 0.018 F1 above the warm start and none ' +
  'resolved above another (docs/results.md).';
