/**
 * A small reader of the Markdown that `pact table` writes (src/experiments/format.ts), so the
 * app can show a committed table.md as HTML without a second copy of its numbers. It reads
 * blocks separated by blank lines: `#` headings, `- ` lists, pipe tables and paragraphs.
 *
 * Pipe tables as GitHub writes them, a little stricter: every row starts with `|`; the second
 * line is the delimiter row (`|---|---:|`, a colon marking the alignment); `\|` is a pipe inside
 * a cell. A table whose second line is not a delimiter row, or a row whose number of cells is not
 * the header's, is an error naming the line (MarkdownTableError), never skipped or padded: a
 * table that reads wrong should not be shown as if it read right. Inline Markdown (emphasis,
 * code, links) is kept as its text.
 */

export type ColumnAlign = 'left' | 'right' | 'center' | null;

export interface MarkdownTable {
  header: string[];
  /** Per column, from the delimiter row: `:--` left, `--:` right, `:-:` center, `---` none. */
  align: ColumnAlign[];
  rows: string[][];
  /** 1-based line of the header row in the text. */
  line: number;
}

export type MarkdownBlock =
  | { kind: 'heading'; level: number; text: string; line: number }
  | { kind: 'paragraph'; text: string; line: number }
  | { kind: 'list'; items: string[]; line: number }
  | { kind: 'table'; table: MarkdownTable; line: number };

export class MarkdownTableError extends Error {
  constructor(
    readonly line: number,
    what: string,
  ) {
    super(`line ${line}: ${what}`);
    this.name = 'MarkdownTableError';
  }
}

const DELIMITER_CELL = /^:?-+:?$/;

/** The cells of one `| a | b |` row, trimmed; `\|` is a pipe inside a cell. */
export function splitTableRow(line: string): string[] {
  const text = line.trim();
  const cells: string[] = [];
  let cell = '';
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (ch === '\\' && text[i + 1] === '|') {
      cell += '|';
      i++;
    } else if (ch === '|') {
      cells.push(cell);
      cell = '';
    } else cell += ch;
  }
  cells.push(cell);
  // The row's leading and trailing pipes leave an empty cell at either end.
  if (text.startsWith('|')) cells.shift();
  if (text.endsWith('|') && !text.endsWith('\\|')) cells.pop();
  return cells.map((c) => c.trim());
}

function readAlign(cell: string): ColumnAlign {
  const left = cell.startsWith(':');
  const right = cell.endsWith(':');
  return left && right ? 'center' : right ? 'right' : left ? 'left' : null;
}

/** A table from its lines (`first`: the header's 1-based line number); throws MarkdownTableError. */
export function parseTable(lines: readonly string[], first: number): MarkdownTable {
  const header = splitTableRow(lines[0]);
  const delimiter = lines.length > 1 ? splitTableRow(lines[1]) : [];
  if (delimiter.length === 0 || !delimiter.every((c) => DELIMITER_CELL.test(c))) {
    throw new MarkdownTableError(first + 1, 'a table needs a delimiter row such as |---|---:| under its header');
  }
  if (delimiter.length !== header.length) {
    throw new MarkdownTableError(
      first + 1,
      `the delimiter row has ${delimiter.length} cells where the header has ${header.length}`,
    );
  }
  const rows = lines.slice(2).map((l, i) => {
    const cells = splitTableRow(l);
    if (cells.length !== header.length) {
      throw new MarkdownTableError(
        first + 2 + i,
        `a table row has ${cells.length} cells where the header has ${header.length}`,
      );
    }
    return cells;
  });
  return { header, align: delimiter.map(readAlign), rows, line: first };
}

/** The blocks of a Markdown text, in order; throws MarkdownTableError on a malformed table. */
export function parseMarkdownBlocks(text: string): MarkdownBlock[] {
  const lines = text.replace(/\r\n?/g, '\n').split('\n');
  const blocks: MarkdownBlock[] = [];
  let i = 0;
  while (i < lines.length) {
    const line = lines[i].trim();
    const lineNo = i + 1;
    if (line === '') {
      i++;
      continue;
    }
    const heading = /^(#{1,6})\s+(.*)$/.exec(line);
    if (heading) {
      blocks.push({ kind: 'heading', level: heading[1].length, text: heading[2].trim(), line: lineNo });
      i++;
      continue;
    }
    // The block runs to the next blank line or heading.
    let end = i + 1;
    while (end < lines.length && lines[end].trim() !== '' && !/^#{1,6}\s/.test(lines[end].trim())) end++;
    const block = lines.slice(i, end).map((l) => l.trim());
    if (line.startsWith('|')) {
      const notRow = block.findIndex((l) => !l.startsWith('|'));
      if (notRow >= 0) throw new MarkdownTableError(i + notRow + 1, 'a table row must start with |');
      blocks.push({ kind: 'table', table: parseTable(block, lineNo), line: lineNo });
    } else if (/^[-*]\s/.test(line)) {
      const items: string[] = [];
      for (const l of block) {
        if (/^[-*]\s/.test(l)) items.push(l.replace(/^[-*]\s+/, ''));
        else items[items.length - 1] += ` ${l}`; // a continuation line of the item above
      }
      blocks.push({ kind: 'list', items, line: lineNo });
    } else {
      blocks.push({ kind: 'paragraph', text: block.join(' '), line: lineNo });
    }
    i = end;
  }
  return blocks;
}
