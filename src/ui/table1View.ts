/**
 * What the home card's "See the measured Table 1, ablations and ToolSearcher table" view shows (MeasuredTable1.svelte): the
 * committed results/table1/table.md read into its parts (`readMeasuredTable`), and a reading
 * of it for a newcomer (`describeTable1`) whose numbers are the table's own cells, never a
 * second copy. The reading's claims (which rows lead, PACT level with the warm start and with
 * MatchTIR) are checked against the cells each time; where the table no longer bears one out,
 * the view says so instead of showing a reading that has gone false.
 */
import { parseMarkdownBlocks, type MarkdownTable } from './markdownTables';

export interface MeasuredTable {
  title: string | null;
  /** "Numerics: …" (engine, backend, kernels, threads), or the warning that the runs differ in them. */
  numerics: string | null;
  /** "Runs made at commit …". */
  commits: string | null;
  /** "Held out: …": the tasks every row was scored on. */
  heldOut: string | null;
  /** The main table: one row per method, mean ± standard error over seeds. */
  main: MarkdownTable;
  /** The "Cells: …" paragraph under the main table. */
  mainNote: string | null;
  /** The "Paired by seed" table, if the file has one. */
  paired: MarkdownTable | null;
  /** The "Each cell: …" paragraph under it, and its list of notes. */
  pairedNote: string | null;
  pairedNotes: string[];
  /** Every other paragraph or list item (the runs' folder, failed runs, warnings), in order. */
  otherNotes: string[];
}

/** A table.md (`pact table`'s format, src/experiments/format.ts) read into its parts; throws when it has no table. */
export function readMeasuredTable(markdown: string): MeasuredTable {
  const blocks = parseMarkdownBlocks(markdown);
  const out: Omit<MeasuredTable, 'main'> & { main: MarkdownTable | null } = {
    title: null,
    numerics: null,
    commits: null,
    heldOut: null,
    main: null,
    mainNote: null,
    paired: null,
    pairedNote: null,
    pairedNotes: [],
    otherNotes: [],
  };
  let section: 'main' | 'paired' = 'main';
  for (const b of blocks) {
    if (b.kind === 'heading') {
      if (b.level === 1 && out.title === null) out.title = b.text;
      else if (/^paired by seed$/i.test(b.text)) section = 'paired';
      else out.otherNotes.push(b.text);
    } else if (b.kind === 'table') {
      if (section === 'main' && out.main === null) out.main = b.table;
      else if (section === 'paired' && out.paired === null) out.paired = b.table;
      else throw new Error(`table.md: an unexpected table at line ${b.line}`);
    } else if (b.kind === 'list') {
      if (section === 'paired') out.pairedNotes.push(...b.items);
      else out.otherNotes.push(...b.items);
    } else {
      const t = b.text;
      if (out.numerics === null && /^(Numerics|Warning):/.test(t)) out.numerics = t;
      else if (out.commits === null && /^(Runs made at commit|No run records the commit)/.test(t)) out.commits = t;
      else if (out.heldOut === null && t.startsWith('Held out:')) out.heldOut = t;
      else if (out.mainNote === null && section === 'main' && t.startsWith('Cells:')) out.mainNote = t;
      else if (out.pairedNote === null && section === 'paired' && t.startsWith('Each cell:')) out.pairedNote = t;
      else out.otherNotes.push(t);
    }
  }
  if (out.main === null) throw new Error('table.md: no table found');
  return { ...out, main: out.main };
}

/** One cell read as numbers: `0.593 ± 0.015`, `+0.078 ± 0.017 (5/5)`, `0.250 (n=1)`; null for `–`. */
export interface Estimate {
  mean: number;
  /** The standard error; null for a single seed. */
  se: number | null;
  /** Paired cells: seeds with d_s > 0, and seeds paired. */
  above: number | null;
  paired: number | null;
}

/** A cell of the table as numbers, or null for `–` (no finite value); throws on a cell that reads as neither. */
export function parseEstimate(cell: string): Estimate | null {
  if (cell === '–' || cell === '-') return null;
  const m = /^([+\-−]?\d+(?:\.\d+)?)(?: ± (\d+(?:\.\d+)?))?(?: \(n=\d+\))?(?: \((\d+)\/(\d+)\))?$/.exec(cell);
  if (!m) throw new Error(`not a table cell: "${cell}"`);
  return {
    mean: Number(m[1].replace('−', '-')),
    se: m[2] === undefined ? null : Number(m[2]),
    above: m[3] === undefined ? null : Number(m[3]),
    paired: m[4] === undefined ? null : Number(m[4]),
  };
}

/** The row whose first cell is `name`, or `name (…)` (the paired table's "pact − frozen (held out: − vanilla)"). */
export function findRow(table: MarkdownTable, name: string): string[] | null {
  return table.rows.find((r) => r[0] === name || r[0].startsWith(`${name} (`)) ?? null;
}

/** The text of one cell, by row name and column header; throws naming what is missing. */
export function readCell(table: MarkdownTable, rowName: string, column: string): string {
  const col = table.header.indexOf(column);
  if (col < 0) throw new Error(`no column "${column}" (columns: ${table.header.join(', ')})`);
  const row = findRow(table, rowName);
  if (!row) throw new Error(`no row "${rowName}" (rows: ${table.rows.map((r) => r[0]).join(', ')})`);
  return row[col];
}

export interface Table1Reading {
  /** What the words in the table mean: ± standard error, held out, paired by seed. */
  howToRead: string;
  /** What it shows; null when a claim no longer holds (`failedClaims` says which). */
  whatItShows: string | null;
  failedClaims: string[];
}

const F1 = 'Solve-F1';
const TRAIN_REWARD_PAIRED = 'Train reward (mean over steps)';
/** Rows that add supervised steps on the expert traces. */
const SUPERVISED_ROWS = ['sft_then_matchtir', 'sft'];

/** A paired cell in words: `-0.000 ± 0.015 (3/5)` → "-0.000 ± 0.015, 3 of 5 seeds above". */
export function pairedInWords(cell: string): string {
  const m = / \((\d+)\/(\d+)\)$/.exec(cell);
  return m ? `${cell.slice(0, m.index)}, ${m[1]} of ${m[2]} seeds above` : cell;
}

/** `|mean| < se`: no difference the seeds can tell. */
const isLevel = (e: Estimate | null) => e !== null && e.se !== null && Math.abs(e.mean) < e.se;

/**
 * The reading of Table 1 for a newcomer, from its cells. Its claims are checked here; any that
 * fails is listed and `whatItShows` is withheld.
 */
export function describeTable1(t: MeasuredTable): Table1Reading {
  const failedClaims: string[] = [];
  const cell = (table: MarkdownTable | null, row: string, col: string): string | null => {
    if (!table) return null;
    try {
      return readCell(table, row, col);
    } catch (e) {
      failedClaims.push((e as Error).message);
      return null;
    }
  };
  const estimate = (text: string | null): Estimate | null => {
    try {
      return text === null ? null : parseEstimate(text);
    } catch (e) {
      failedClaims.push((e as Error).message);
      return null;
    }
  };

  const seeds = [...new Set(t.main.rows.map((r) => r[t.main.header.indexOf('n')]))];
  const n = seeds.length === 1 ? seeds[0] : null;
  const heldOutTasks = /^Held out: (\d+) tasks/.exec(t.heldOut ?? '')?.[1] ?? null;
  const example = cell(t.main, 'pact', F1);
  const seedsText = n ? `${n} seeds` : 'its seeds';
  const pactVsWarm = cell(t.paired, 'pact − frozen', F1);
  const seedsAbove = /\((\d+\/\d+)\)$/.exec(pactVsWarm ?? '')?.[1] ?? 'k/n';
  const tasks = heldOutTasks ? `${heldOutTasks} tasks` : 'the tasks';
  const howToRead =
    `Each row is one method run ${n ? `${n} times, once per seed` : 'once per seed'} (a seed fixes the ` +
    "run's random choices: which prompts come when, which tokens are sampled). A cell such as " +
    `${example ?? 'mean ± se'} is the mean over the ${seedsText} ± its standard error, which says how much a mean ` +
    `of ${seedsText} wobbles from one set of seeds to another: two means closer than about two standard errors ` +
    `are not told apart. "Held out: ${tasks}" means every trained model was scored on the same ${tasks}, from a ` +
    'world no run trained on, one greedy answer each. Solve-F1 scores the tool calls (Solve-R: how many of the ' +
    'answers a task needs the calls found; Solve-P: how many of the calls found one); Answer correct is the share ' +
    'of final answers that hold every expected piece. "Paired by seed" compares each run with the control run of ' +
    'the same seed, on the same tasks and prompts, and averages those differences; ' +
    `"(${seedsAbove})" counts the seeds in which the run came out above. frozen is the warm start taken through the ` +
    'same steps without learning (so it has a train reward to pair with, and no held-out score); vanilla is the ' +
    'warm start scored on the held-out tasks, the same in every seed.';

  // The claims, each from the cells.
  const ranked = t.main.rows
    .map((r) => ({ name: r[0], e: estimate(r[t.main.header.indexOf(F1)] ?? '–') }))
    .filter((r): r is { name: string; e: Estimate } => r.e !== null)
    .sort((a, b) => b.e.mean - a.e.mean);
  const leaders = ranked.slice(0, SUPERVISED_ROWS.length).map((r) => r.name);
  if (!SUPERVISED_ROWS.every((name) => leaders.includes(name))) {
    failedClaims.push(`the rows with the highest ${F1} are ${leaders.join(', ')}, not ${SUPERVISED_ROWS.join(', ')}`);
  }
  const pactVsMatchtir = cell(t.paired, 'pact − matchtir', F1);
  const pactTrain = cell(t.paired, 'pact − frozen', TRAIN_REWARD_PAIRED);
  if (!t.paired) failedClaims.push('the file has no "Paired by seed" table');
  if (pactVsWarm !== null && !isLevel(estimate(pactVsWarm))) {
    failedClaims.push(`PACT − warm start is ${pactVsWarm}: not level`);
  }
  if (pactVsMatchtir !== null && !isLevel(estimate(pactVsMatchtir))) {
    failedClaims.push(`PACT − MatchTIR is ${pactVsMatchtir}: not level`);
  }
  const train = estimate(pactTrain);
  const isTrainAhead = train !== null && train.se !== null && train.mean > 2 * train.se && train.above === train.paired;
  if (pactTrain !== null && !isTrainAhead) {
    failedClaims.push(`PACT's train reward − frozen is ${pactTrain}: not ahead in every seed`);
  }
  if (failedClaims.length > 0) return { howToRead, whatItShows: null, failedClaims };

  const [first, second] = SUPERVISED_ROWS;
  const whatItShows =
    `The rows that lead are the two that add supervised steps on the expert traces: ${first} at ` +
    `${cell(t.main, first, F1)} ${F1} and ${second} at ${cell(t.main, second, F1)}, against ` +
    `${cell(t.main, 'vanilla', F1)} for the warm start (vanilla). PACT is level with the warm start (the ` +
    `pact − frozen row, paired by seed: ${pairedInWords(pactVsWarm!)}) and with MatchTIR (pact − matchtir: ` +
    `${pairedInWords(pactVsMatchtir!)}). The paper has PACT first; at this model's size and with runs this short, that ` +
    'ordering is not reproduced. What PACT does move is its train reward on the training prompts: above the ' +
    `frozen copy's in every seed (${pairedInWords(pactTrain!)}), a gain that does not reach the held-out tasks.`;
  return { howToRead, whatItShows, failedClaims };
}

/** What the view says of the ablations, which follow Table 1 in it (ablationsView.ts). */
export const ABLATIONS_NOTE =
  'Which parts of PACT matter (the objective, the anchoring rate q, the trace components, the SFT schedule) is ' +
  'what the four ablations measure, 3 seeds each: they follow Table 1 below, each with what it shows, its figure ' +
  'and its tables.';
