import { describe, expect, it } from 'vitest';
import { MarkdownTableError, parseMarkdownBlocks, splitTableRow } from './markdownTables';

const DOC = `# results

Numerics: cpu-engine, wasm.

| Method | n | Solve-F1 | Note |
|:---|---:|:---:|---|
| pact | 5 | 0.593 ± 0.015 | (held out: − vanilla) |
| a \\| b | 1 | 0.250 (n=1) | – |

## Paired by seed

- one note
  that wraps
- two
Held out: 200 tasks.
`;

describe('parseMarkdownBlocks', () => {
  it('reads headings, paragraphs, a table with its alignment, and a list', () => {
    const blocks = parseMarkdownBlocks(DOC);
    expect(blocks.map((b) => b.kind)).toEqual(['heading', 'paragraph', 'table', 'heading', 'list']);
    expect(blocks[0]).toEqual({ kind: 'heading', level: 1, text: 'results', line: 1 });
    expect(blocks[1]).toEqual({ kind: 'paragraph', text: 'Numerics: cpu-engine, wasm.', line: 3 });
    const table = blocks[2].kind === 'table' ? blocks[2].table : null;
    expect(table).toEqual({
      header: ['Method', 'n', 'Solve-F1', 'Note'],
      align: ['left', 'right', 'center', null],
      rows: [
        ['pact', '5', '0.593 ± 0.015', '(held out: − vanilla)'],
        ['a | b', '1', '0.250 (n=1)', '–'],
      ],
      line: 5,
    });
    expect(blocks[3]).toMatchObject({ kind: 'heading', level: 2, text: 'Paired by seed' });
    // A list item's continuation line joins it; a line that is not an item joins the item above.
    expect(blocks[4]).toEqual({
      kind: 'list',
      items: ['one note that wraps', 'two Held out: 200 tasks.'],
      line: 12,
    });
  });

  it('splits a row on unescaped pipes only', () => {
    expect(splitTableRow('| +0.049 ± 0.007 (5/5) | -0.000 |')).toEqual(['+0.049 ± 0.007 (5/5)', '-0.000']);
    expect(splitTableRow('|a\\|b|c|')).toEqual(['a|b', 'c']);
    expect(splitTableRow('| x | |')).toEqual(['x', '']);
  });

  it('ends a paragraph at a heading with no blank line before it', () => {
    expect(parseMarkdownBlocks('text\n## Next').map((b) => b.kind)).toEqual(['paragraph', 'heading']);
  });

  it('fails on a malformed table, naming the line, rather than skipping or padding it', () => {
    const noDelimiter = 'intro\n\n| a | b |\n| 1 | 2 |\n';
    expect(() => parseMarkdownBlocks(noDelimiter)).toThrow(MarkdownTableError);
    expect(() => parseMarkdownBlocks(noDelimiter)).toThrow(
      'line 4: a table needs a delimiter row such as |---|---:| under its header',
    );
    expect(() => parseMarkdownBlocks('| a | b |\n|---|---|\n| 1 | 2 | 3 |')).toThrow(
      'line 3: a table row has 3 cells where the header has 2',
    );
    expect(() => parseMarkdownBlocks('| a | b |\n|---|\n')).toThrow(
      'line 2: the delimiter row has 1 cells where the header has 2',
    );
    expect(() => parseMarkdownBlocks('| a |\n|---|\nnot a row')).toThrow('line 3: a table row must start with |');
    // An escaped pipe is not a column: this row has 2 cells, not 3.
    expect(() => parseMarkdownBlocks('| a | b |\n|---|---|\n| 1 \\| 2 | 3 |')).not.toThrow();
  });
});
