/**
 * Lessons as data: the four ideas of PACT in the paper's own
 * terms, each with the equation it refers to (the equation labels of the PACT paper's source).
 * The guided tour and the panels' explanations read from here.
 */
export interface Lesson {
  id: string;
  title: string;
  /** Plain-text equation, as in the paper. */
  equation: string;
  /** The paper's label for that equation. */
  equationRef: string;
  body: string;
}

export const METHOD_TOUR: readonly Lesson[] = [
  {
    id: 'prompt-only-rollout',
    title: 'Prompt-only rollouts',
    equation: 'τ_{i,k} ~ π_old(· | x_i),  k = 1…K',
    equationRef: 'Eq. (prompt-only-rollout), §4.1',
    body:
      'For each training prompt x_i the old policy samples K complete tool-use rollouts conditioned only on the prompt, ' +
      'exactly as at inference time. The expert trace h*_i is never shown during rollout generation; rewards and ' +
      'advantages are computed on these prompt-only rollouts (MatchTIR hard credit assignment).',
  },
  {
    id: 'trace-conditioned-ratio',
    title: 'Trace-conditioned ratio',
    equation:
      'r^h_{i,k,n}(θ) = π_θ(τ_{i,k,n} | c^h_i, τ_{i,k,<n}) / π_old(τ_{i,k,n} | c^h_i, τ_{i,k,<n}),  c^h_i = [x_i; h*_i]',
    equationRef: 'Eq. (trace-conditioned-ratio), (trace-rl-loss), §4.2',
    body:
      'After the rollouts are collected, the policy ratio of each policy-generated token is computed with the expert ' +
      'trace as privileged context. The clipped surrogate L^h_RL weights these ratios by the prompt-only advantages, ' +
      'so the trace guides the update while the rollouts stay prompt-only.',
  },
  {
    id: 'component-aware-sft',
    title: 'Component-aware SFT',
    equation:
      'm_{i,n}(s) = 1 on reasoning prefix R_i(s), λ_a(s) on tool-call spans A_i, 0 otherwise;  λ_a(s) = λ_start − Δλ_a·min(s/S, 1)',
    equationRef: 'Eq. (sft-mask), (sft-loss), (tool-call-annealing), §4.3',
    body:
      'An auxiliary SFT loss supervises only model-controllable parts of the expert trace: a reasoning prefix that shrinks ' +
      'by semantic segment from L4 to L0, and complete tool-call spans whose scale anneals from 0.8 to 0.2. ' +
      'Tool observations stay as context and are never supervised.',
  },
  {
    id: 'prompt-only-anchoring',
    title: 'Prompt-only anchoring',
    equation: 'z_i ~ Bernoulli(q);  L_i = (1 − z_i)(L^h_RL(i) + β_SFT·L_SFT(i; s)) + z_i·L^x_RL(i)',
    equationRef: 'Eq. (prompt-routing-gate), (overall-objective), §4.4',
    body:
      'Each prompt is routed by a gate: with probability q (0.4 in the paper) it is trained with plain prompt-only RL, ' +
      'otherwise with trace co-training. This keeps a direct optimisation path under the prompt-only condition used at inference.',
  },
];

/** The panels that carry a lesson. */
export type PanelId =
  | 'run-setup'
  | 'mask-schedule'
  | 'anchoring-gates'
  | 'prefix-levels'
  | 'token-masks'
  | 'live-charts'
  | 'rollout-inspector'
  | 'runs';

/** Each panel's short explanation, with the equation it shows (PACT §4, App. A, C, D). */
export const PANEL_LESSONS: Readonly<Record<PanelId, Lesson>> = {
  'run-setup': {
    id: 'run-setup',
    title: 'What a PACT run optimises',
    equation: 'L_i = (1 − z_i)·(L^h_RL(i) + β_SFT·L_SFT(i; s)) + z_i·L^x_RL(i),  z_i ~ Bernoulli(q)',
    equationRef: 'Eq. (trace-cotraining-objective), (overall-objective), §4.4; defaults from Table 6, App. A',
    body:
      'Each step samples a batch of prompts and K prompt-only rollouts per prompt. A prompt routed to trace co-training ' +
      '(z_i = 0) is updated with the trace-conditioned RL surrogate plus component-aware SFT scaled by β_SFT; a prompt ' +
      'routed to the anchor (z_i = 1) uses only the standard prompt-only RL loss. The paper uses q = 0.4, β_SFT = 0.1, ' +
      'λa from 0.8 to 0.2 and K = 8; batch size and learning rate are scaled down here for a small model.',
  },
  'mask-schedule': {
    id: 'mask-schedule',
    title: 'Annealed supervision: λa(s) and the reasoning prefix',
    equation:
      'λa(s) = λa^start − Δλa·min(s/S, 1),  Δλa = λa^start − λa^end;  m_{i,n}(s) = 1 on R_i(s), λa(s) on A_i, 0 otherwise',
    equationRef: 'Eq. (tool-call-annealing), (sft-mask), §4.3; App. C, D',
    body:
      'Component-aware SFT supervises only model-controllable parts of the expert trace. Complete tool-call spans A_i are ' +
      'weighted by λa(s), which falls linearly from λa^start to λa^end over the annealing horizon S: a larger early weight ' +
      'encourages valid tool calls, a smaller later weight lets rewards guide exploration. The active reasoning prefix R_i(s) ' +
      'shrinks by semantic segment, L4 → L3 → … → L0 (L4: the strongest safe prefix before explicit tool-call leakage; L0: no ' +
      'reasoning). Tool observations are never supervised. The paper gives no step per level; here steps 1…S are cut into ' +
      'five near-equal stages, L4 at the first step and L0 at the last. "Fix" keeps supervision constant, "Token A" anneals ' +
      'by raw token count (App. D).',
  },
  'anchoring-gates': {
    id: 'anchoring-gates',
    title: 'Prompt-only anchoring',
    equation: 'z_i^(e) ~ Bernoulli(q);  z_i = 1 → L^x_RL(i),  z_i = 0 → L^h_RL(i) + β_SFT·L_SFT(i; s)',
    equationRef: 'Eq. (prompt-routing-gate), (overall-objective), §4.4; Algorithm 1',
    body:
      'For each prompt of each step a gate is sampled with the anchoring probability q. When z_i = 1 the prompt uses only ' +
      'the standard prompt-only RL loss, without any expert-trace guidance; when z_i = 0 it adopts the trace co-training ' +
      'loss. The anchor keeps a direct optimisation path under the prompt-only condition used at inference time; too large ' +
      "a q leaves less expert process guidance (Figure 5). The grid below is drawn with the trainer's own random stream " +
      "from the seed and q above (your run's until you change them here), so it shows the gates a run with them draws.",
  },
  'prefix-levels': {
    id: 'prefix-levels',
    title: 'Prefix levels over semantic reasoning segments',
    equation:
      'L0 ⊂ L1 ⊂ L2 ⊂ L3 ⊂ L4 per turn (cumulative chunk prefixes, L0 = no reasoning);  annealed L4 → L3 → L2 → L1 → L0',
    equationRef:
      'App. C "Hybrid segmentation" and "Prefix-reasoning construction"; §4.3 "Annealed Reasoning Supervision"',
    body:
      'For each assistant turn the reasoning inside the <think> block is split into semantic chunks such as task_restate, ' +
      'tool_scan, tool_selection, required_arg_grounding, failure_reflection and decision_summary. The segmenter also detects ' +
      'explicit tool-call leakage, literal JSON previews or phrases that introduce the exact action; such spans are marked ' +
      'explicit_call_preview and are excluded from safe prefix hints. Five cumulative prefix levels are built per turn: L0 ' +
      'reveals no reasoning, while L4 reveals the strongest safe prefix before explicit tool-call leakage. Segment-level ' +
      'annealing preserves semantic units, where token-level annealing may cut through a coherent reasoning unit. Tool ' +
      'responses are kept as context, but they are never supervised. Here the expert is a scripted teacher (the paper uses ' +
      'Qwen3-235B), whose traces are kept only when they verify against the reference answer; the paper leaves the level ' +
      'boundaries to the annotator, here L1–L3 show one to three chunks (spread evenly when a turn has fewer than four safe chunks).',
  },
  'token-masks': {
    id: 'token-masks',
    title: 'Component-aware SFT weights, token by token',
    equation:
      'm_{i,n}(s) = 1 if n ∈ R_i(s), λa(s) if n ∈ A_i, 0 otherwise;  L_SFT(i; s) = −(1/Z_i(s))·Σ_n m_{i,n}(s)·log π_θ(h*_{i,n} | x_i, h*_{i,<n}),  Z_i(s) = Σ_n m_{i,n}(s)',
    equationRef: 'Eq. (sft-mask), (sft-loss), (tool-call-annealing), §4.3; Eq. (trace-conditioned-ratio), §4.2; App. D',
    body:
      'Rather than imitating the full trajectory, component-aware SFT supervises only model-controllable components: ' +
      'reasoning tokens and tool-call tokens. R_i(s) specifies the active reasoning-prefix positions at step s; A_i holds complete ' +
      'expert tool-call spans, weighted by λa(s) and never shortened, since partial tool-calls can break the structured action. ' +
      'Tool observations are kept as context but are not supervised, since they are produced by the environment. Z_i(s) ' +
      'normalises the supervised tokens; when Z_i(s) = 0 the SFT term is skipped for that prompt. The trace-conditioned RL ' +
      'ratio r^h is a different thing: it is computed for the tokens of the sampled prompt-only rollout τ_{i,k}, at its ' +
      'policy-generated positions M_{i,k}, with c^h_i = [x_i; h*_i] as context, so the expert-trace tokens below are context ' +
      'for that ratio and carry no ratio themselves.',
  },
  'live-charts': {
    id: 'live-charts',
    title: 'What each curve measures',
    equation:
      'L_i = (1 − z_i)·(L^h_RL(i) + β_SFT·L_SFT(i; s)) + z_i·L^x_RL(i);  L^x_RL = −E[min{r^x A, clip(r^x, 1−ε, 1+ε) A}]',
    equationRef:
      'Eq. (overall-objective), (prompt-only-rl-loss), (trace-rl-loss), (sft-loss), §3–4; FTRL metrics as in the experiments (§5)',
    body:
      "Reward is the mean trajectory-level reward R_k = Σ_t r_{k,t} of the step's prompt-only rollouts. The loss terms are " +
      'drawn apart: L^x_RL for prompts routed to the prompt-only anchor (z_i = 1), L^h_RL (the trace-conditioned surrogate) and ' +
      'L_SFT (component-aware SFT) for prompts routed to trace co-training (z_i = 0); a term is blank at a step where no prompt ' +
      'used it. KL is the k3 estimate of KL(π_θ‖π_ref) over policy-generated tokens, as the penalty reads it: under c^h for ' +
      'prompts on L^h, under x otherwise; its second curve reads every prompt under x with the pre-update policy, so it says how ' +
      'far the policy that samples the rollouts has moved from the start, whatever the route. Entropy is that of the policy on its own ' +
      'tokens; clip ratio is the fraction of tokens whose ratio left [1 − ε, 1 + ε]; grad norm is measured before clipping. ' +
      'When some prompts use L^h, a further chart compares how likely the policy finds its own rollout with the expert trace in ' +
      'view and without it: the mean of log π_old(τ_n | c^h) − log π_old(τ_n | x) over their tokens, below 0 when reading the ' +
      'trace makes the rollout less likely (the ratio of Eq. (trace-conditioned-ratio) is then taken far from where the ' +
      'prompt-only policy stands). ' +
      'The held-out chart reports solve rate, solve precision, and solve F1 (FTRL) for tool-use recipes, or tool-selection ' +
      'F1, recall, precision, Match and SRecall for ToolSearcher recipes, on unseen tasks: one greedy rollout each, or, with ' +
      "the config field evalSamples = N, the mean over N rollouts each sampled at the run's temperature.",
  },
  'rollout-inspector': {
    id: 'rollout-inspector',
    title: 'Hard credit assignment, rollout by rollout',
    equation:
      'A_{k,n} = A^g_k + A^ℓ_{k,t};  A^g_k = (R_k − mean R)/(std R + ε_A);  A^ℓ_{k,t} from R^ℓ_{k,t} = Σ_{u≥t} γ^{u−t} r_{k,u}',
    equationRef:
      'App. B "Training Reward and Advantage" (MatchTIR hard credit assignment); Eq. (prompt-only-rollout), §4.1',
    body:
      'For each prompt we sample K rollouts and normalize rewards within the same rollout group. Each predicted tool-call is ' +
      'matched one-to-one to a reference tool-call by maximum-weight bipartite matching (Hungarian algorithm); a matched call ' +
      'earns its similarity score, an unmatched one −λ_pen (0 here). For a tool-use turn t the rewards of its calls are averaged ' +
      '(0 when no tool-call is produced); the final-answer turn earns the F1 of the answer. For any model-generated token n in ' +
      'turn t, the final advantage is A^g_k + A^ℓ_{k,t}. Tool-response tokens are generated by the environment and are excluded ' +
      'from the policy loss: the strip draws them hatched, with no advantage. The same reward and advantage are used for both ' +
      'prompt-only RL and trace-conditioned RL.',
  },
  runs: {
    id: 'runs',
    title: 'Runs saved in this browser',
    equation: 'checkpoint = (θ, AdamW moments, RNG state, data cursor, step, config)',
    equationRef: 'what a checkpoint holds: TrainerState, src/recipes/types.ts',
    body:
      "Every run the trainer starts is saved in this browser's IndexedDB with its metric log and its latest checkpoints, " +
      'written after every step (the last two are kept). A checkpoint holds everything needed to ' +
      'continue bit for bit, so Resume continues from the last checkpoint with the same random streams. A run whose tab ' +
      'was reloaded or closed while it trained is marked interrupted (a run lives only as long as its page). Tick a run to ' +
      'overlay its curves on the Live charts. Nothing leaves this machine unless you export it.',
  },
};

/**
 * One step of the guided tour: first the work (what the app is and how long a run takes here,
 * the setup, Train, the live charts, the rollout inspector, the saved runs), then the method,
 * each step on the panel that shows it, in the order the panels stand on the page (the tour
 * only moves down). `panel` is that panel's `data-testid`; `targets` are selectors inside it
 * for the thing the step explains (the first one present is pointed at, and the card is placed
 * off it); `quotes` are the paper's own phrases a method step uses (lessons.test.ts checks each
 * is in the text and in PACT). In `look`, "{runTime}" is replaced by the estimate for this device.
 */
export interface TourStep {
  id: string;
  /** 'work': how to use the app; 'method': one idea of PACT, in the paper's words. */
  kind: 'work' | 'method';
  title: string;
  /** `data-testid` of the panel the step scrolls to. */
  panel: string;
  /** The panel's heading, as the card names it. */
  panelName: string;
  /** Selectors inside the panel for what the step points at, best first; the panel itself when none is there. */
  targets: readonly string[];
  /** The step's idea (for method steps, the paper's, in its words). */
  body: string;
  /** What to look at in the panel. */
  look: string;
  equation?: string;
  equationRef?: string;
  /** Exact phrases of pact.txt (LaTeX markup removed) that `body` quotes (method steps). */
  quotes: readonly string[];
}

/** Where the run-time estimate goes in a step's `look`. */
export const RUN_TIME_SLOT = '{runTime}';

export const GUIDED_TOUR: readonly TourStep[] = [
  {
    id: 'what-this-is',
    kind: 'work',
    title: 'What PACT Lab does',
    panel: 'home',
    panelName: 'Start here',
    targets: [],
    body:
      'PACT Lab trains a small Qwen3 language model to use tools over several turns, here, in this tab: no server, nothing ' +
      'downloaded while it runs. A run repeats one step: the policy answers a batch of generated tool-use tasks from the ' +
      "prompt alone, each answer is scored against the task's reference tool calls, and the policy is updated. PACT's " +
      "update also reads an expert's worked trace of the task as privileged context, and imitates parts of it; the second " +
      'half of this tour shows how.',
    look: 'How long a run of the current setup takes here: {runTime}. The Train button on this card starts it.',
    quotes: [],
  },
  {
    id: 'run-setup',
    kind: 'work',
    title: 'Choose what to train',
    panel: 'run-setup',
    panelName: 'Run setup',
    targets: ['.setup-form > fieldset:first-of-type'],
    body:
      'A run is a recipe (PACT, or one of the baselines the papers compare it with), a model (the shipped qwen3-nano warm ' +
      "start by default), a set of generated tool-use tasks, and the method's knobs. Every field shows its default and its " +
      "range, and is checked as you type; the whole setup travels in the page's link, so a run can be shared or repeated.",
    look: "The first group picks the recipe, the model and the tasks; the groups under it hold the optimiser and PACT's own knobs (q, β_SFT, λa).",
    quotes: [],
  },
  {
    id: 'train',
    kind: 'work',
    title: 'Train, pause, stop',
    panel: 'run-setup',
    panelName: 'Run setup',
    targets: ['.controls'],
    body:
      'Train loads the model and the tasks in a background worker and starts the steps; the page stays usable. Pause and ' +
      'Stop take effect when the current step ends. Each run is saved in this browser, with a checkpoint after every ' +
      'step, so a reload or a closed tab loses at most the step under way: Resume continues it.',
    look: 'The line under the buttons says where the run is: its step, its phase, and what Resume would do.',
    quotes: [],
  },
  {
    id: 'live-charts',
    kind: 'work',
    title: 'Watch it learn',
    panel: 'live-charts',
    panelName: 'Live charts',
    targets: ['[data-testid="chart-reward"]', '[data-testid="charts-empty"]'],
    body:
      "Each step adds a point: the mean reward of the step's rollouts, the loss terms, the KL divergence from the starting " +
      'policy, the speed, and at each held-out evaluation the solve rate, precision and F1 on unseen tasks. Before your ' +
      'first run the charts show a recorded demo run, labelled as such.',
    look: 'The reward chart: its latest value and step are written under it; hover it, or focus it and use the arrow keys, to read any step.',
    quotes: [],
  },
  {
    id: 'prompt-only-rollout',
    kind: 'method',
    title: 'Prompt-only rollouts',
    panel: 'rollout-inspector',
    panelName: 'Rollout inspector',
    targets: ['[data-testid="rollout-table"]', '[data-testid="inspector-empty"]'],
    body:
      'For each training prompt x_i, the old policy is conditioned only on the input prompt and receives no expert trace, ' +
      'sampling K complete tool-use rollouts. This prompt-only sampling rule separates trajectory exploration from expert ' +
      'guidance: rewards and advantages are computed under the inference-aligned rollout distribution. Expert traces are ' +
      'used only after rollout collection.',
    look:
      'Each of the K rollouts of one prompt is a multi-turn transcript: reasoning, tool calls, tool responses and the answer, ' +
      'with its turn rewards and its advantage strip (MatchTIR hard credit assignment, App. B).',
    equation: 'τ_{i,k} ~ π_old(· | x_i),  k = 1, …, K',
    equationRef: 'Eq. (prompt-only-rollout), §4.1',
    quotes: [
      'the old policy is conditioned only on the input prompt and receives no expert trace',
      'separates trajectory exploration from expert guidance',
      'Expert traces are used only after rollout collection',
    ],
  },
  {
    id: 'runs',
    kind: 'work',
    title: 'Your saved runs',
    panel: 'runs-panel',
    panelName: 'Runs',
    targets: ['[data-testid="runs-table"]', '[data-testid="runs-empty"]'],
    body:
      'Every run is kept in this browser with its metrics and its latest checkpoints. Resume continues a run from its ' +
      'checkpoint with the same random streams; a run can be renamed, overlaid on the charts, exported (metrics as CSV or ' +
      'JSON, the checkpoint as one .tar that loads as a Hugging Face folder) and deleted. A run that failed keeps its report.',
    look: "Each row: the run's name, recipe, status (the same words as the status line), its step, and what Resume would do.",
    quotes: [],
  },
  {
    id: 'trace-conditioned-ratio',
    kind: 'method',
    title: 'Trace-conditioned ratio',
    panel: 'token-masks',
    panelName: 'Token masks',
    targets: ['[data-testid="ratio-row"]', '[data-testid="mask-design"]'],
    body:
      'After rollout generation the expert trace becomes privileged context c^h_i = [x_i; h*_i]. The policy ratio of each ' +
      'token of the sampled rollout τ_{i,k} at the policy-generated token positions M_{i,k} is computed with c^h_i as context, ' +
      'while keeping the sampled rollouts and their advantages prompt-only. The clipped surrogate L^h_RL weights these ' +
      'ratios by the advantages: this surrogate keeps the rewards and advantages tied to prompt-only rollouts, while using ' +
      'the expert trace context to evaluate the policy update.',
    look:
      'The row [x | h* | τ] under "Which tokens carry the trace-conditioned ratio r^h" marks the prompt and the expert-trace ' +
      "tokens as context c^h, and only the rollout's policy-generated tokens as carrying r^h.",
    equation:
      'r^h_{i,k,n}(θ) = π_θ(τ_{i,k,n} | c^h_i, τ_{i,k,<n}) / π_old(τ_{i,k,n} | c^h_i, τ_{i,k,<n}),  n ∈ M_{i,k},  c^h_i = [x_i; h*_i]',
    equationRef: 'Eq. (trace-conditioned-ratio), (trace-rl-loss), §4.2',
    quotes: [
      'policy-generated token positions',
      'while keeping the sampled rollouts and their advantages prompt-only',
      'This surrogate keeps the rewards and advantages tied to prompt-only rollouts, while using the expert trace context to evaluate the policy update',
    ],
  },
  {
    id: 'reasoning-prefix-levels',
    kind: 'method',
    title: 'Component-aware SFT: reasoning prefixes L4 → L0',
    panel: 'prefix-levels',
    panelName: 'Prefix levels L0–L4',
    targets: ['[data-testid="level-picker"]'],
    body:
      'For reasoning, we supervise prefixes rather than full traces. Prefix levels are built over semantic reasoning segments: ' +
      'token-level annealing may cut through a coherent reasoning unit, while segment-level annealing preserves semantic ' +
      'units and reduces supervision from longer to shorter prefixes, L4 → L3 → … → L0. L0 reveals no reasoning, while L4 ' +
      'reveals the strongest safe prefix before explicit tool-call leakage. The active prefix R_i(s) is the level of step s.',
    look: 'Pick a level: the chunks it reveals are listed turn by turn, with the leakage spans marked and never revealed.',
    equation: 'L0 ⊂ L1 ⊂ L2 ⊂ L3 ⊂ L4 per turn;  R_i(s) follows L4 → L3 → … → L0 over training',
    equationRef: '§4.3 "Annealed Reasoning Supervision"; App. C',
    quotes: [
      'we supervise prefixes rather than full traces',
      'Token-level annealing may cut through a coherent reasoning unit',
      'segment-level annealing preserves semantic units',
      'L0 reveals no reasoning, while L4 reveals the strongest safe prefix before explicit tool-call leakage',
    ],
  },
  {
    id: 'component-aware-sft',
    kind: 'method',
    title: 'Component-aware SFT: the tool-call scale λa',
    panel: 'mask-schedule',
    panelName: 'Mask schedule',
    targets: ['[data-testid="chart-lambda"]', '[data-testid="marked-readout"]'],
    body:
      'An auxiliary SFT loss gives direct process supervision from the expert trace. Rather than imitating the full ' +
      'trajectory, we supervise only model-controllable components: reasoning tokens and tool-call tokens. Tool observations ' +
      'are kept as context but are not supervised, since they are produced by the environment. Complete tool-call spans A_i ' +
      'are weighted by λa(s), which falls linearly over the annealing horizon S: a larger early weight encourages valid ' +
      'tool-calls, while a smaller later weight relaxes imitation and lets rewards guide exploration.',
    look:
      'The solid curve is λa(s) from λa start to λa end over the horizon S, the dashed steps the reasoning prefix level; the ' +
      'marked step s reads both. Drag a handle or type a value and the curves and the token masks redraw.',
    equation: 'm_{i,n}(s) = 1 if n ∈ R_i(s), λa(s) if n ∈ A_i, 0 otherwise;  λa(s) = λa^start − Δλa·min(s/S, 1)',
    equationRef: 'Eq. (sft-mask), (sft-loss), (tool-call-annealing), §4.3',
    quotes: [
      'Rather than imitating the full trajectory, we supervise only model-controllable components: reasoning tokens and tool-call tokens',
      'Tool observations are kept as context but are not supervised, since they are produced by the environment',
      'a larger early weight encourages valid tool-calls, while a smaller later weight relaxes imitation and lets rewards guide exploration',
    ],
  },
  {
    id: 'prompt-only-anchoring',
    kind: 'method',
    title: 'Prompt-only anchoring',
    panel: 'anchoring-gates',
    panelName: 'Anchoring gates',
    targets: ['[data-testid="gate-grid"]', '[data-testid="gate-fraction"]'],
    body:
      'To reduce over-reliance on this training-only context, each prompt x_i draws a prompt-level gate z_i ~ Bernoulli(q), ' +
      'where q is the anchoring probability (0.4 in the paper). If the prompt is routed to prompt-only anchoring (z_i = 1), ' +
      'the update uses standard prompt-only RL with no trace-conditioned likelihood or SFT loss; otherwise (z_i = 0) it is ' +
      'trained with the trace-conditioned RL surrogate plus β_SFT times component-aware SFT.',
    look:
      'Each cell is one gate of one prompt at one step, marked by a letter and a fill pattern as well as a colour: x on solid ' +
      'for the prompt-only anchor, h on hatching for trace co-training. The running fraction is compared with q; the q ' +
      "slider resamples a preview with the run's seed.",
    equation: 'z_i ~ Bernoulli(q);  L_i = (1 − z_i)·(L^h_RL(i) + β_SFT·L_SFT(i; s)) + z_i·L^x_RL(i)',
    equationRef: 'Eq. (prompt-routing-gate), (trace-cotraining-objective), (overall-objective), §4.4',
    quotes: [
      'To reduce over-reliance on this training-only context',
      'where q is the anchoring probability',
      'the update uses standard prompt-only RL with no trace-conditioned likelihood or SFT loss',
    ],
  },
];
