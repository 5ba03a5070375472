/**
 * What the app will show, and which issue delivers it. The "Still to come" panel
 * reads this list, so the page says plainly what is not built yet. Built so far:
 * Device, Run setup (with the training buttons), Live charts, Rollout inspector, Runs
 * (resume, delete, metrics and checkpoint export, checkpoint import), Task files (with a policy's
 * FTRL evaluation), Mask schedule, Anchoring gates, Prefix levels L0–L4, Token masks.
 */
export interface PlannedPanel {
  name: string;
  what: string;
  /** The open issue that delivers it; absent when no issue asks for it yet. */
  issue?: number;
}

export const PLANNED_PANELS: readonly PlannedPanel[] = [
  {
    name: 'Training on a loaded FTRL file',
    what: "runs train on generated tasks (and the search recipes on the generated tool repository); an FTRL-format file can be evaluated (Task files panel, or pact eval-ftrl --model) but not trained on: its Python tools would have to run in Pyodide inside the training loop, and its prompts (2.6k–5k tokens with Qwen3's tokenizer) exceed qwen3-nano's 2,048-token window, so it needs a user's Qwen3 folder. The FTRL files in the project's shared data are test sets, for evaluation only",
  },
  {
    name: 'A warm start for the search recipes',
    what: "the shipped warm start has never seen ToolSearcher's search environment, so toolsearcher, search_r1, gspo and gdpo runs from it select no tools (F1 0); a 25-minute CPU fine-tune on search episodes learnt their shape but not to copy the request into its queries, and a GPU run of npm run pretrain -- --search-tasks N is still to do",
    issue: 7,
  },
];
