/**
 * Vocabulary pruning for the small presets: a compact id space [0, keptCount) over a subset of
 * a byte-level BPE vocabulary (Qwen3's), so qwen3-nano/micro need an embedding of a few thousand
 * rows instead of 151,936.
 *
 * Kept ids = the added tokens ∪ the 256 byte-level base tokens ∪ the tokens seen when the full
 * tokenizer encodes a corpus; compact id k is the k-th kept full id in ascending order. A full
 * token that is not kept is re-expressed by the fewest kept tokens whose bytes concatenate to
 * its bytes (dynamic programming over split points), so any text encodes and decodes back as
 * the full tokenizer would decode it.
 *
 * Simplifies: the fallback split is the shortest one, not what BPE with only kept merges would
 * give; it is deterministic, which is all the model needs. Details: docs/model.md.
 */
import type { TextTokenizer } from './types';

/** What pruning needs from the full tokenizer (Qwen3Tokenizer provides it). */
export interface ByteLevelBpeSource extends TextTokenizer {
  /** Vocabulary string of `id` in byte-level characters ('Ġ' = space), or an added token's text. */
  tokenString(id: number): string | undefined;
  /** Ids of the added tokens (special and control tokens), never split. */
  listAddedTokenIds(): number[];
}

/** The mapping saved with a checkpoint (`pruned_vocab.json`): full ids, ascending. */
export interface PrunedVocabMapping {
  keptIds: number[];
}

export interface SelectKeptIdsOptions {
  /** Keep at most this many corpus tokens (the most frequent; ties → smaller id). */
  maxCorpusTokens?: number;
  /** Cap on the total kept count (added + base + corpus tokens). */
  maxVocabSize?: number;
  /** Ids kept whatever their frequency, like the mandatory ones (a vocabulary being grown keeps its own tokens). */
  keepIds?: readonly number[];
}

/**
 * GPT-2's byte ↔ unicode table used by byte-level BPE: printable bytes map to themselves, the
 * other 68 (0–32, 127–160, 173) to U+0100 onwards in byte order.
 */
export function listByteLevelChars(): string[] {
  const chars: string[] = new Array(256);
  let next = 256;
  for (let b = 0; b < 256; b++) {
    const printable = (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174 && b <= 255);
    chars[b] = String.fromCharCode(printable ? b : next++);
  }
  return chars;
}

/** The 256 ids of the byte-level base tokens, in byte order (byte b → ids[b]). */
export function listByteLevelBaseIds(source: ByteLevelBpeSource): number[] {
  return listByteLevelChars().map((ch, b) => {
    const id = source.tokenId(ch);
    if (id === undefined)
      throw new Error(`the vocabulary lacks the byte-level base token for byte ${b} (${JSON.stringify(ch)})`);
    return id;
  });
}

/** The ids every pruned vocabulary must keep: added tokens and byte-level base tokens. */
export function listMandatoryIds(source: ByteLevelBpeSource): number[] {
  return [...new Set([...source.listAddedTokenIds(), ...listByteLevelBaseIds(source)])].sort((a, b) => a - b);
}

/** Kept ids for `corpus`: the mandatory ids plus the (most frequent) tokens the corpus uses. */
export function selectKeptIds(
  source: ByteLevelBpeSource,
  corpus: Iterable<string>,
  options: SelectKeptIdsOptions = {},
): PrunedVocabMapping {
  const mandatory = [...new Set([...listMandatoryIds(source), ...(options.keepIds ?? [])])];
  const mandatorySet = new Set(mandatory);
  const counts = new Map<number, number>();
  for (const text of corpus) {
    for (const id of source.encode(text)) {
      if (!mandatorySet.has(id)) counts.set(id, (counts.get(id) ?? 0) + 1);
    }
  }
  let limit = options.maxCorpusTokens ?? Infinity;
  if (options.maxVocabSize !== undefined) {
    if (options.maxVocabSize < mandatory.length) {
      throw new Error(
        `maxVocabSize ${options.maxVocabSize} is below the ${mandatory.length} mandatory tokens (added + 256 byte-level${options.keepIds ? ' + keepIds' : ''})`,
      );
    }
    limit = Math.min(limit, options.maxVocabSize - mandatory.length);
  }
  const ranked = [...counts.entries()].sort((a, b) => b[1] - a[1] || a[0] - b[0]);
  const corpusIds = ranked.slice(0, Math.max(0, limit)).map(([id]) => id);
  return { keptIds: [...mandatory, ...corpusIds].sort((a, b) => a - b) };
}

/** The identity mapping (the whole vocabulary kept). */
export function createIdentityMapping(source: ByteLevelBpeSource): PrunedVocabMapping {
  return { keptIds: Array.from({ length: source.vocabSize }, (_, i) => i) };
}

/** Validates a mapping read from JSON (`{keptIds: number[]}`, ascending distinct non-negative integers). */
export function parsePrunedVocabMapping(json: unknown): PrunedVocabMapping {
  if (json === null || typeof json !== 'object' || Array.isArray(json)) {
    throw new Error('pruned vocabulary mapping must be an object {keptIds: number[]}');
  }
  const keptIds = (json as { keptIds?: unknown }).keptIds;
  if (!Array.isArray(keptIds)) throw new Error('pruned vocabulary mapping: field "keptIds" must be an array');
  keptIds.forEach((id, i) => {
    if (!Number.isSafeInteger(id) || (id as number) < 0) {
      throw new Error(`pruned vocabulary mapping: keptIds[${i}] = ${JSON.stringify(id)} is not a non-negative integer`);
    }
    if (i > 0 && (id as number) <= keptIds[i - 1]) {
      throw new Error(
        `pruned vocabulary mapping: keptIds[${i}] = ${id} is not above keptIds[${i - 1}] = ${keptIds[i - 1]}`,
      );
    }
  });
  return { keptIds: keptIds.slice() as number[] };
}

/** A `TextTokenizer` over the compact id space of a pruned vocabulary. */
export class PrunedTokenizer implements TextTokenizer {
  readonly vocabSize: number;
  readonly keptIds: readonly number[];
  private readonly source: ByteLevelBpeSource;
  /** full id → compact id, −1 when not kept. */
  private readonly fullToCompact: Int32Array;
  private readonly addedIds: Set<number>;
  /** Re-expressions of dropped full tokens, as compact ids. */
  private readonly fallbackCache = new Map<number, number[]>();
  private readonly maxTokenChars: number;

  constructor(source: ByteLevelBpeSource, mapping: PrunedVocabMapping) {
    const { keptIds } = parsePrunedVocabMapping(mapping);
    this.source = source;
    this.keptIds = keptIds;
    this.vocabSize = keptIds.length;
    this.fullToCompact = new Int32Array(source.vocabSize).fill(-1);
    keptIds.forEach((fullId, compactId) => {
      if (fullId >= source.vocabSize) {
        throw new Error(
          `pruned vocabulary mapping: keptIds[${compactId}] = ${fullId} is past the vocabulary (${source.vocabSize})`,
        );
      }
      this.fullToCompact[fullId] = compactId;
    });
    this.addedIds = new Set(source.listAddedTokenIds());
    for (const id of listMandatoryIds(source)) {
      if (this.fullToCompact[id] < 0) {
        throw new Error(
          `pruned vocabulary mapping lacks mandatory token ${JSON.stringify(source.tokenString(id))} (id ${id}); ` +
            'added tokens and the 256 byte-level tokens must be kept',
        );
      }
    }
    let maxChars = 1;
    for (const id of keptIds) {
      if (!this.addedIds.has(id)) maxChars = Math.max(maxChars, source.tokenString(id)?.length ?? 1);
    }
    this.maxTokenChars = maxChars;
  }

  encode(text: string): number[] {
    const out: number[] = [];
    for (const fullId of this.source.encode(text)) {
      const compact = this.fullToCompact[fullId];
      if (compact >= 0) out.push(compact);
      else for (const piece of this.splitDroppedToken(fullId)) out.push(piece);
    }
    return out;
  }

  decode(ids: number[]): string {
    const fullIds = ids.map((id, i) => {
      if (!Number.isInteger(id) || id < 0 || id >= this.vocabSize) {
        throw new Error(`decode: ids[${i}] = ${id} is outside the pruned vocabulary [0, ${this.vocabSize})`);
      }
      return this.keptIds[id];
    });
    return this.source.decode(fullIds);
  }

  tokenId(token: string): number | undefined {
    const fullId = this.source.tokenId(token);
    if (fullId === undefined) return undefined;
    const compact = this.fullToCompact[fullId];
    return compact >= 0 ? compact : undefined;
  }

  /** Full id of compact id `id`. */
  toFullId(id: number): number {
    if (!Number.isInteger(id) || id < 0 || id >= this.vocabSize)
      throw new Error(`compact id ${id} is outside [0, ${this.vocabSize})`);
    return this.keptIds[id];
  }

  /** Compact id of full id `fullId`, or undefined when that token was pruned. */
  toCompactId(fullId: number): number | undefined {
    const compact = fullId >= 0 && fullId < this.fullToCompact.length ? this.fullToCompact[fullId] : -1;
    return compact >= 0 ? compact : undefined;
  }

  /** The mapping to save with the checkpoint. */
  toMapping(): PrunedVocabMapping {
    return { keptIds: this.keptIds.slice() };
  }

  /** The compact ids that spell full token `fullId`: itself when kept, else its byte-level fallback split. */
  expressFullId(fullId: number): number[] {
    const compact = this.fullToCompact[fullId];
    return compact >= 0 ? [compact] : this.splitDroppedToken(fullId);
  }

  /**
   * Fewest kept tokens spelling the byte string of a dropped token. best[i] = fewest pieces for
   * the first i characters; ties keep the split found first (the longest last piece).
   */
  private splitDroppedToken(fullId: number): number[] {
    const cached = this.fallbackCache.get(fullId);
    if (cached !== undefined) return cached;
    const text = this.source.tokenString(fullId);
    if (text === undefined) throw new Error(`token id ${fullId} has no vocabulary string`);
    const n = text.length;
    const best = new Array<number>(n + 1).fill(Infinity);
    const pieceId = new Array<number>(n + 1).fill(-1);
    const pieceStart = new Array<number>(n + 1).fill(-1);
    best[0] = 0;
    for (let end = 1; end <= n; end++) {
      for (let start = Math.max(0, end - this.maxTokenChars); start < end; start++) {
        if (best[start] + 1 >= best[end]) continue;
        const id = this.source.tokenId(text.slice(start, end));
        if (id === undefined || this.addedIds.has(id)) continue;
        const compact = this.fullToCompact[id];
        if (compact < 0) continue;
        best[end] = best[start] + 1;
        pieceId[end] = compact;
        pieceStart[end] = start;
      }
    }
    if (!Number.isFinite(best[n]))
      throw new Error(`token id ${fullId} (${JSON.stringify(text)}) cannot be spelled with kept tokens`);
    const pieces: number[] = [];
    for (let end = n; end > 0; end = pieceStart[end]) pieces.push(pieceId[end]);
    pieces.reverse();
    this.fallbackCache.set(fullId, pieces);
    return pieces;
  }
}

/** A pruned tokenizer over `source` with `mapping` (use createIdentityMapping for the full vocabulary). */
export function createPrunedTokenizer(source: ByteLevelBpeSource, mapping: PrunedVocabMapping): PrunedTokenizer {
  return new PrunedTokenizer(source, mapping);
}
