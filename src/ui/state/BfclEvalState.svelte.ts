/**
 * The BFCL section of the Task files panel as reactive state: the picked data folder (its
 * entry files, read by src/envs/bfcl/fileSource.ts) with each entry's first-prompt tokens
 * (Qwen3's tokenizer in the page, src/run/bfclPrompts.ts), the picked copy of BFCL's source
 * (its backend modules), and the evaluation: the `eval-bfcl` request to the trainer worker,
 * its `bfcl-eval-progress` events (one verdict per entry) and the report.
 */
import type { BfclDataTexts, PickedTextFile } from '../../envs/bfcl/fileSource';
import type { BfclBackendSources } from '../../envs/bfcl/pythonBackend';
import type { BfclEntryResult } from '../../run/bfclEval';
import type { TrainerClient } from '../../../workers/client';
import type { BfclEvalReport, BfclEvalSettings, EvalPolicySpec, FtrlEvalPhase } from '../../../workers/protocol';

export type BfclEvalStatus = 'idle' | 'running' | 'finished' | 'failed' | 'stopped';

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

export class BfclEvalState {
  data = $state.raw<BfclDataTexts | null>(null);
  files = $state.raw<BfclPickedFile[]>([]);
  dataError = $state<string | null>(null);
  isReadingData = $state(false);
  sources = $state.raw<BfclBackendSources | null>(null);
  sourceName = $state('');
  sourceError = $state<string | null>(null);

  status = $state<BfclEvalStatus>('idle');
  phase = $state<FtrlEvalPhase | null>(null);
  message = $state('');
  done = $state(0);
  total = $state(0);
  /** The verdicts so far, as the worker sends them. */
  verdicts = $state.raw<BfclEntryResult[]>([]);
  report = $state.raw<BfclEvalReport | null>(null);
  error = $state<string | null>(null);

  private client: TrainerClient | null = null;
  private unsubscribe: (() => void) | null = null;

  attach(client: TrainerClient): void {
    this.client = client;
    this.unsubscribe = client.subscribe((e) => {
      if (e.type !== 'bfcl-eval-progress' || this.status !== 'running') return;
      this.phase = e.phase;
      this.message = e.message;
      this.done = e.done;
      this.total = e.total;
      if (e.entry) this.verdicts = [...this.verdicts, e.entry];
    });
  }

  detach(): void {
    this.unsubscribe?.();
    this.unsubscribe = null;
    this.client = null;
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
    if (!this.client) {
      this.status = 'failed';
      this.error = 'Cannot evaluate: the trainer worker is not running in this page';
      return;
    }
    if (!this.data || !this.sources) {
      this.status = 'failed';
      this.error = "Cannot evaluate: pick BFCL's data folder and your copy of BFCL's source first";
      return;
    }
    this.status = 'running';
    this.error = null;
    this.report = null;
    this.verdicts = [];
    this.phase = 'loading';
    this.message = 'starting…';
    this.done = 0;
    this.total = 0;
    try {
      const res = await this.client.request({ type: 'eval-bfcl', data: this.data, sources: this.sources, ...input });
      if (res.type !== 'bfcl-eval') throw new Error(`unexpected reply "${res.type}" to eval-bfcl`);
      this.report = res.report;
      this.status = res.report.isStopped ? 'stopped' : 'finished';
    } catch (e) {
      this.status = 'failed';
      this.error = `The evaluation failed: ${e instanceof Error ? e.message : String(e)}`;
    }
  }

  async stop(): Promise<void> {
    try {
      await this.client?.request({ type: 'stop-eval' });
    } catch (e) {
      this.error = `Could not stop the evaluation: ${e instanceof Error ? e.message : String(e)}`;
    }
  }
}
