/**
 * What the app will show, and which issue delivers it. The "Still to come" panel
 * reads this list, so the page says plainly what is not built yet. Built so far:
 * Device, Run setup (with the training buttons), Live charts, Rollout inspector, Runs
 * (resume, delete, metrics export), Mask schedule, Anchoring gates, Prefix levels L0–L4,
 * Token masks.
 */
export interface PlannedPanel {
  name: string;
  what: string;
  issue: number;
}

export const PLANNED_PANELS: readonly PlannedPanel[] = [
  { name: 'Checkpoint files', what: 'export a saved checkpoint to a file and import one back (Runs panel), once the worker carries them', issue: 6 },
];
