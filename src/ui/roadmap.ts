/**
 * What the app will show, and which issue delivers it. The "Still to come" panel
 * reads this list, so the page says plainly what is not built yet. Built so far:
 * Device, Run setup (configuration only), Mask schedule, Anchoring gates, Prefix levels
 * L0–L4, Token masks.
 */
export interface PlannedPanel {
  name: string;
  what: string;
  issue: number;
}

export const PLANNED_PANELS: readonly PlannedPanel[] = [
  { name: 'Live charts', what: 'reward, Solve-R/P/F1, each loss term, KL, entropy, clip ratio, grad norm, tokens/s', issue: 6 },
  { name: 'Rollout inspector', what: 'the K rollouts of a prompt, turn rewards, matched gold calls, advantages', issue: 6 },
  { name: 'Runs', what: 'runs and checkpoints saved in IndexedDB: resume, export, import', issue: 5 },
];
