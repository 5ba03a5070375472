/**
 * The BFCL section of the Task files panel as reactive state: the picked data folder (its
 * entry files, read by src/envs/bfcl/fileSource.ts) with each entry's first-prompt tokens
 * (Qwen3's tokenizer in the page, src/run/bfclPrompts.ts), the picked copy of BFCL's source
 * (its backend modules), and the evaluation (TaskEvalState.svelte.ts): the `eval-bfcl` request
 * to the trainer worker, its `bfcl-eval-progress` events (one verdict per entry) and the report.
 */
import type { BfclDataTexts, PickedTextFile } from '../../envs/bfcl/fileSource';
import type { BfclBackendSources } from '../../envs/bfcl/pythonBackend';
import type { BfclEntryResult } from '../../run/bfclEval';
import type { BfclEvalReport, BfclEvalSettings, EvalPolicySpec } from '../../../workers/protocol';
import { TaskEvalState, type TaskEvalProgressEvent } from './TaskEvalState.svelte';

/** One picked entry file: its entries' first-prompt tokens (Qwen3's full vocabulary), in file order. */
export interface BfclPickedFile {
  file: string;
  entries: number;
  firstPromptTokens: number[];
}

/** The files of a folder pick, each with its path inside the picked folder. */
export function toPickedTextFiles(files: readonly File[]): PickedTextFile[] {
  return files.map((f) => ({ path: f.webkitRelativePath || f.name, read: () => f.text() }));
}

export class BfclEvalState extends TaskEvalState<BfclEvalReport> {
  data = $state.raw<BfclDataTexts | null>(null);
  files = $state.raw<BfclPickedFile[]>([]);
  dataError = $state<string | null>(null);
  isReadingData = $state(false);
  sources = $state.raw<BfclBackendSources | null>(null);
  sourceName = $state('');
  sourceError = $state<string | null>(null);

  /** The verdicts so far, as the worker sends them. */
  verdicts = $state.raw<BfclEntryResult[]>([]);

  constructor() {
    super('bfcl-eval-progress');
  }

  /** Reads a picked BFCL data folder and counts each entry's first prompt. */
  async loadData(picked: readonly File[]): Promise<void> {
    this.isReadingData = true;
    this.dataError = null;
    try {
      const [{ readBfclDataFolder, parseBfclDataTexts }, { countBfclFirstPromptTokens }, { loadPageTokenizer }] =
        await Promise.all([
          import('../../envs/bfcl/fileSource'),
          import('../../run/bfclPrompts'),
          import('../pageTokenizer'),
        ]);
      const data = await readBfclDataFolder(toPickedTextFiles(picked));
      const parsed = parseBfclDataTexts(data);
      const tokenizer = await loadPageTokenizer();
      const files: BfclPickedFile[] = [];
      for (const f of parsed) {
        const firstPromptTokens: number[] = [];
        for (const [i, pair] of f.pairs.entries()) {
          if (i > 0 && i % 20 === 0) await new Promise((r) => setTimeout(r, 0)); // keep the page responsive
          firstPromptTokens.push(
            countBfclFirstPromptTokens(pair, f.docsByClass, tokenizer, (m, o) => tokenizer.renderChat(m, o)),
          );
        }
        files.push({ file: f.file, entries: f.pairs.length, firstPromptTokens });
      }
      this.data = data;
      this.files = files;
    } catch (e) {
      this.data = null;
      this.files = [];
      this.dataError = e instanceof Error ? e.message : String(e);
    } finally {
      this.isReadingData = false;
    }
  }

  /** Reads the backend modules from a picked copy of BFCL's source. */
  async loadSources(picked: readonly File[]): Promise<void> {
    this.sourceError = null;
    try {
      const { readBfclSourceFolder } = await import('../../envs/bfcl/fileSource');
      const files = toPickedTextFiles(picked.filter((f) => (f.webkitRelativePath || f.name).endsWith('.py')));
      this.sources = await readBfclSourceFolder(files);
      this.sourceName = (picked[0]?.webkitRelativePath || '').split('/')[0] || 'picked folder';
    } catch (e) {
      this.sources = null;
      this.sourceError = e instanceof Error ? e.message : String(e);
    }
  }

  async evaluate(input: { policy: EvalPolicySpec; settings: BfclEvalSettings }): Promise<void> {
    const { data, sources } = this;
    await this.runEvaluation(
      !data || !sources
        ? { refusal: "Cannot evaluate: pick BFCL's data folder and your copy of BFCL's source first" }
        : async (client) => {
            const res = await client.request({ type: 'eval-bfcl', data, sources, ...input });
            if (res.type !== 'bfcl-eval') throw new Error(`unexpected reply "${res.type}" to eval-bfcl`);
            return res.report;
          },
    );
  }

  protected override onStart(): void {
    this.verdicts = [];
  }

  protected override onProgress(e: TaskEvalProgressEvent): void {
    if (e.type === 'bfcl-eval-progress' && e.entry) this.verdicts = [...this.verdicts, e.entry];
  }

  protected override isStoppedReport(report: BfclEvalReport): boolean {
    return report.isStopped;
  }
}
