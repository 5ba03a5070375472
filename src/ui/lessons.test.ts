import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PANEL_LESSONS } from './lessons';

// The lessons must use the paper's own words (issue 6, "Teaching"): each phrase below is
// quoted in a lesson and must appear in PACT's text (LaTeX markup removed).
const PAPER = resolve(process.env.PACT_PAPERS_DIR ?? '../shared/papers', 'pact.txt');
const hasPaper = existsSync(PAPER);
if (!hasPaper) console.warn(`lessons.test: ${PAPER} is missing; the quotation check is skipped`);

function normalize(text: string): string {
  return text
    .replace(/\\(?:texttt|textit|textbf)\{([^}]*)\}/g, '$1')
    .replace(/\\_/g, '_')
    .replace(/\$/g, '')
    .replace(/\s+/g, ' ')
    .toLowerCase();
}

const QUOTED: Record<'prefix-levels' | 'token-masks', string[]> = {
  'prefix-levels': [
    'are excluded from safe prefix hints',
    'L0 reveals no reasoning, while L4 reveals the strongest safe prefix before explicit tool-call leakage',
    'Tool responses are kept as context, but they are never supervised',
    'token-level annealing may cut through a coherent reasoning unit',
    'segment-level annealing preserves semantic units',
  ],
  'token-masks': [
    'only model-controllable components: reasoning tokens and tool-call tokens',
    'Tool observations are kept as context but are not supervised, since they are produced by the environment',
    'partial tool-calls can break the structured action',
    'specifies the active reasoning-prefix positions at step s',
  ],
};

describe.skipIf(!hasPaper)('panel lessons quote PACT', () => {
  const paper = hasPaper ? normalize(readFileSync(PAPER, 'utf8')) : '';
  for (const [id, phrases] of Object.entries(QUOTED) as [keyof typeof QUOTED, string[]][]) {
    it(`${id}: every quoted phrase is in the lesson and in the paper`, () => {
      const lesson = normalize(PANEL_LESSONS[id].body);
      for (const phrase of phrases) {
        expect(lesson, `lesson ${id}`).toContain(normalize(phrase));
        expect(paper, `paper, for lesson ${id}`).toContain(normalize(phrase));
      }
    });
  }
});
