/**
 * The four ablations under the measured Table 1 (MeasuredTable1.svelte): each committed
 * results/NAME/table-with-frozen.md (`pact table` over the file's runs pooled with Table 1's
 * frozen and vanilla seeds, docs/results.md "The ablations") read by `readMeasuredTable`, and a
 * reading for a newcomer written from the table's own paired cells (`describeAblation`): which
 * row is highest held out, which rows are above the warm start in every seed, where the paper's
 * own configuration stands, and the train reward against the frozen copy. Nothing in a reading
 * is a second copy of a number; a row the reading needs and the table lacks is named instead.
 * The ToolSearcher table (TOOLSEARCHER_TABLE) is read and worded the same way, ranked by F1.
 */
import type { MarkdownTable } from './markdownTables';
import { pairedInWords, parseEstimate, type Estimate, type MeasuredTable } from './table1View';

export interface AblationSpec {
  /** The experiment file's name: results/NAME/FILE (table-with-frozen.md unless `file`), its figure in docs/. */
  name: string;
  /** The table's file in results/NAME/ (default table-with-frozen.md). */
  file?: string;
  /** The held-out column the reading ranks by (default Solve-F1). */
  metric?: string;
  /** What it ablates, and where the paper has it. */
  title: string;
  /** The row that is the paper's own configuration (its first or chosen row). */
  paperRow: string;
  /** That row in words, with the paper's standing for it. */
  paperRowWords: string;
}

/** In the order of docs/results.md. PACT paper: Tables 2, 3, 4, Fig. 4 and App. D Table 8. */
export const ABLATIONS: readonly AblationSpec[] = [
  {
    name: 'ablation-objectives',
    title: 'Which objective (PACT Table 2)',
    paperRow: 'Lh+SFT',
    paperRowWords: 'full PACT (L^h + β·L_SFT), first in the paper',
  },
  {
    name: 'anchoring-q',
    title: 'How many prompts are anchored to prompt-only RL, q (PACT Fig. 4)',
    paperRow: 'q=0.4',
    paperRowWords: "q = 0.4, the paper's chosen trade-off",
  },
  {
    name: 'ablation-trace-components',
    title: "Which parts of the expert's trace the update reads (PACT Table 3)",
    paperRow: 'All',
    paperRowWords: 'the whole trace with reasoning, tool calls and responses, first in the paper',
  },
  {
    name: 'sft-schedules',
    title: 'How the SFT term is annealed (PACT Table 4 and App. D Table 8)',
    paperRow: 'Seg A + Scale A',
    paperRowWords: "PACT's own schedule of segment and scale annealing, first in the paper's Table 4",
  },
];

const F1 = 'Solve-F1';
const TRAIN = 'Train reward (mean over steps)';

/** The table file of a spec, relative to the repository: results/NAME/FILE. */
export const specTablePath = (spec: AblationSpec) => `results/${spec.name}/${spec.file ?? 'table-with-frozen.md'}`;

/**
 * ToolSearcher Table 1 and its ablation (ToolSearcher paper, Table 1 and Sec. 4.3), read and worded
 * as the PACT ablations are: its committed results/toolsearcher/table.md pairs every row with a
 * frozen copy (train) and the search warm start (held out), ranked by tool-selection F1.
 */
export const TOOLSEARCHER_TABLE: AblationSpec = {
  name: 'toolsearcher',
  file: 'table.md',
  metric: 'F1',
  title: 'ToolSearcher Table 1 and its ablation: which tools a policy selects from a repository',
  paperRow: 'toolsearcher',
  paperRowWords:
    "ToolSearcher itself (event-level search modelling, trajectory-aligned credit, category-constrained search), first in the paper's Table 1",
};

interface PairedRow {
  name: string;
  f1: { text: string; e: Estimate };
  train: { text: string; e: Estimate } | null;
}

/** The rows "NAME − frozen (held out: − vanilla)" of the paired table, with their `metric` and train cells. */
function readPairedRows(paired: MarkdownTable, metric: string): PairedRow[] {
  const col = (h: string) => paired.header.indexOf(h);
  if (col(metric) < 0) throw new Error(`the paired table has no "${metric}" column`);
  const out: PairedRow[] = [];
  for (const r of paired.rows) {
    const m = /^(.+) − frozen \(held out: − vanilla\)$/.exec(r[0]);
    if (!m) continue;
    const f1 = parseEstimate(r[col(metric)]);
    if (!f1) continue;
    const trainText = col(TRAIN) >= 0 ? r[col(TRAIN)] : null;
    const train = trainText ? parseEstimate(trainText) : null;
    out.push({
      name: m[1],
      f1: { text: r[col(metric)], e: f1 },
      train: trainText && train ? { text: trainText, e: train } : null,
    });
  }
  return out;
}

const list = (names: string[]) =>
  names.length <= 1 ? names.join('') : `${names.slice(0, -1).join(', ')} and ${names[names.length - 1]}`;

export interface AblationReading {
  /** What it shows, from the cells; null when the table lacks what the reading needs (`problems`). */
  text: string | null;
  problems: string[];
}

/** The reading of one ablation table, every number a cell of its paired table. */
export function describeAblation(t: MeasuredTable, spec: AblationSpec): AblationReading {
  if (!t.paired) return { text: null, problems: ['the file has no "Paired by seed" table'] };
  const metric = spec.metric ?? F1;
  let rows: PairedRow[];
  try {
    rows = readPairedRows(t.paired, metric);
  } catch (e) {
    return { text: null, problems: [(e as Error).message] };
  }
  if (rows.length < 2) return { text: null, problems: ['fewer than two rows are paired against the frozen control'] };
  const paper = rows.find((r) => r.name === spec.paperRow);
  if (!paper) return { text: null, problems: [`no paired row for the paper's configuration "${spec.paperRow}"`] };

  const ranked = [...rows].sort((a, b) => b.f1.e.mean - a.f1.e.mean);
  const top = ranked[0];
  const everySeed = rows.filter((r) => r.f1.e.paired !== null && r.f1.e.above === r.f1.e.paired && r.f1.e.mean > 0);
  const parts: string[] = [];
  parts.push(
    `Held out, against the warm start (${metric}, paired by seed), the highest of the ${rows.length} rows is ` +
      `${top.name}: ${pairedInWords(top.f1.text)}; the lowest is ${ranked[ranked.length - 1].name}: ` +
      `${pairedInWords(ranked[ranked.length - 1].f1.text)}.`,
  );
  parts.push(
    everySeed.length === 0
      ? 'No row is above the warm start in every seed.'
      : `Above the warm start in every seed: ${list(everySeed.map((r) => r.name))}.`,
  );
  parts.push(
    paper === top
      ? `The paper's configuration, ${spec.paperRowWords}, is the highest here too.`
      : `The paper's configuration, ${spec.paperRowWords}, is ${paper.name} here, at ` +
          `${pairedInWords(paper.f1.text)}, below ${top.name} in mean (two means closer than about two ` +
          'standard errors are not told apart).',
  );
  const trains = rows.filter((r) => r.train !== null);
  if (trains.length === rows.length) {
    const allAhead = trains.every((r) => r.train!.e.paired !== null && r.train!.e.above === r.train!.e.paired);
    const best = [...trains].sort((a, b) => b.train!.e.mean - a.train!.e.mean)[0];
    parts.push(
      `On the training prompts, ${allAhead ? "every row's reward is above the frozen copy's in every seed" : "not every row's reward is above the frozen copy's in every seed"}; ` +
        `the largest gain is ${best.name}'s (${pairedInWords(best.train!.text)}).`,
    );
  }
  return { text: parts.join(' '), problems: [] };
}
