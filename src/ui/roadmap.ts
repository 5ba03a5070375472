/**
 * What the app will show, and which issue delivers it. The placeholder panel
 * reads this list, so the page says plainly what is not built yet.
 */
export interface PlannedPanel {
  name: string;
  what: string;
  issue: number;
}

export const PLANNED_PANELS: readonly PlannedPanel[] = [
  { name: 'Run setup', what: 'recipe, model, task set and the method’s knobs (q, β_SFT, λa, horizon, K…), kept in the URL', issue: 6 },
  { name: 'Live charts', what: 'reward, Solve-R/P/F1, each loss term, KL, entropy, clip ratio, grad norm, tokens/s', issue: 6 },
  { name: 'Mask schedule', what: 'λa(s) and the reasoning prefix level over training steps', issue: 6 },
  { name: 'Prefix levels L0–L4', what: 'an expert trace’s reasoning chunks, leakage spans and what each level reveals', issue: 6 },
  { name: 'Token masks', what: 'each token’s SFT weight m(s) and the tokens that carry the trace-conditioned ratio', issue: 6 },
  { name: 'Anchoring gates', what: 'the sampled gates z per prompt and step, against q', issue: 6 },
  { name: 'Rollout inspector', what: 'the K rollouts of a prompt, turn rewards, matched gold calls, advantages', issue: 6 },
  { name: 'Runs', what: 'runs and checkpoints saved in IndexedDB: resume, export, import', issue: 5 },
];
