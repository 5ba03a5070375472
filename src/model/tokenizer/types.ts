/** The narrow tokenizer interface the environments and traces depend on. */
export interface TextTokenizer {
  /** Token ids of `text`, with no special tokens added. */
  encode(text: string): number[];
  /** Text of `ids`; special tokens are kept as their literal text. */
  decode(ids: number[]): string;
  /** Id of a special token such as `<|im_end|>`, or undefined when absent. */
  tokenId(token: string): number | undefined;
  readonly vocabSize: number;
}
