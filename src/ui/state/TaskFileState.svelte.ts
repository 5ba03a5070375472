/**
 * The FTRL task file loaded in the Task files panel, as reactive state the page shares: the
 * Task files panel shows and evaluates it, Run setup trains on it ("loaded FTRL file") and
 * sends its text with the start request. The file stays in this tab.
 *
 * Run setup also asks how many tokens each task's prompt takes in the run's vocabulary
 * (`requestPromptTokens`): counted here with Qwen3's tokenizer (pageTokenizer.ts), through a
 * pruned vocabulary when the policy has one (the shipped warm start's, a picked folder's), by
 * the run's own rule (src/run/ftrlTaskSplit.ts countPromptTokens: the prompt a rollout starts
 * from). Counts are kept per file and vocabulary; a few lines are counted per turn of the
 * event loop, so the page stays responsive on FTRL's 200 long prompts.
 */
import type { PromptVocabulary } from '../ftrlSetup';
import { readFtrlFile, type TaskFileSummary } from '../taskFileImport';

/** The loaded file: its summary (Task files panel) and its text (sent to the worker). */
export interface LoadedTaskFile {
  name: string;
  text: string;
  summary: TaskFileSummary;
}

/** Lines counted between two turns of the event loop. */
const LINES_PER_TURN = 4;

export class TaskFileState {
  file = $state.raw<LoadedTaskFile | null>(null);
  error = $state<string | null>(null);
  isReading = $state(false);
  /** Prompt tokens by 1-based line, per vocabulary key, for the loaded file. */
  promptTokens = $state.raw<ReadonlyMap<string, ReadonlyMap<number, number>>>(new Map());
  /** Why counting failed (the tokenizer or the warm start's vocabulary could not be read). */
  countError = $state<string | null>(null);

  private pending = new Set<string>();
  /** Bumped per loaded file, so a count of an older file is dropped. */
  private version = 0;

  async load(file: File): Promise<void> {
    this.isReading = true;
    this.error = null;
    try {
      const read = await readFtrlFile(file);
      this.version++;
      this.pending.clear();
      this.promptTokens = new Map();
      this.countError = null;
      this.file = { name: read.summary.fileName, text: read.text, summary: read.summary };
    } catch (e) {
      this.error = e instanceof Error ? e.message : String(e);
    } finally {
      this.isReading = false;
    }
  }

  /** The counts of the loaded file in `vocab`, or null until they are counted. */
  promptTokensIn(vocab: PromptVocabulary): ReadonlyMap<number, number> | null {
    return this.promptTokens.get(vocab.key) ?? null;
  }

  /** Starts counting the loaded file's prompts in `vocab`, unless done or under way. */
  requestPromptTokens(vocab: PromptVocabulary): void {
    const file = this.file;
    if (!file || this.promptTokens.has(vocab.key) || this.pending.has(vocab.key)) return;
    this.pending.add(vocab.key);
    const version = this.version;
    void this.countPrompts(file.text, vocab).then(
      (counts) => {
        if (version !== this.version) return;
        this.pending.delete(vocab.key);
        this.promptTokens = new Map([...this.promptTokens, [vocab.key, counts]]);
      },
      (e: unknown) => {
        if (version !== this.version) return;
        this.pending.delete(vocab.key);
        this.countError = `Could not count the prompts' tokens: ${e instanceof Error ? e.message : String(e)}`;
      },
    );
  }

  private async countPrompts(text: string, vocab: PromptVocabulary): Promise<Map<number, number>> {
    const [{ loadPageTokenizer }, { readFtrlTaskFile, countPromptTokens }, { bindRenderChat }, pruned, warm] =
      await Promise.all([
        import('../pageTokenizer'),
        import('../../run/ftrlTaskSplit'),
        import('../../recipes/policyVocab'),
        import('../../model/tokenizer/prunedVocab'),
        import('../../recipes/warmStart/files'),
      ]);
    const source = await loadPageTokenizer();
    let mapping = vocab.mapping;
    if (vocab.isWarmStart) {
      const url = `${import.meta.env.BASE_URL}${warm.WARM_START_DIR}/pruned_vocab.json`;
      const res = await fetch(url);
      if (!res.ok) throw new Error(`the shipped warm start's vocabulary is not served at ${url} (HTTP ${res.status})`);
      mapping = pruned.parsePrunedVocabMapping(await res.json());
    }
    const tokenizer = mapping ? new pruned.PrunedTokenizer(source, mapping) : source;
    const renderChat = bindRenderChat(source);
    const counts = new Map<number, number>();
    const { items } = readFtrlTaskFile(text);
    for (let i = 0; i < items.length; i++) {
      if (i > 0 && i % LINES_PER_TURN === 0) await new Promise((r) => setTimeout(r, 0));
      counts.set(items[i].line, countPromptTokens(items[i].task, tokenizer, renderChat));
    }
    return counts;
  }
}
