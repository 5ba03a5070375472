/**
 * What the app will show, and which issue delivers it. The "Still to come" panel
 * reads this list, so the page says plainly what is not built yet. Built so far:
 * Device, Run setup (configuration only), Mask schedule, Anchoring gates.
 */
export interface PlannedPanel {
  name: string;
  what: string;
  issue: number;
}

export const PLANNED_PANELS: readonly PlannedPanel[] = [
  { name: 'Live charts', what: 'reward, Solve-R/P/F1, each loss term, KL, entropy, clip ratio, grad norm, tokens/s', issue: 6 },
  { name: 'Prefix levels L0–L4', what: 'an expert trace’s reasoning chunks, leakage spans and what each level reveals', issue: 6 },
  { name: 'Token masks', what: 'each token’s SFT weight m(s) and the tokens that carry the trace-conditioned ratio', issue: 6 },
  { name: 'Rollout inspector', what: 'the K rollouts of a prompt, turn rewards, matched gold calls, advantages', issue: 6 },
  { name: 'Runs', what: 'runs and checkpoints saved in IndexedDB: resume, export, import', issue: 5 },
];
