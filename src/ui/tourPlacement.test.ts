import { describe, expect, it } from 'vitest';
import { minCardHeight, overlaps, placeTourCard, visiblePart, type Box } from './tourPlacement';

const card = { width: 440, height: 380 };

describe('placeTourCard', () => {
  it('at 1280×800 puts the card beside a narrow target, and below or above a full-width one', () => {
    const narrow: Box = { top: 40, left: 20, width: 300, height: 500 };
    expect(placeTourCard(narrow, { width: 1280, height: 800 }, card)).toEqual({
      side: 'right',
      left: 332,
      top: 40,
      width: 440,
      height: 380,
      maxHeight: 776,
    });
    const wideRightEdge: Box = { top: 40, left: 900, width: 360, height: 200 };
    expect(placeTourCard(wideRightEdge, { width: 1280, height: 800 }, card)).toMatchObject({
      side: 'left',
      left: 900 - 12 - 440,
    });
    // full width (1208 px), scrolled to 12 px from the top: below it, 12 px under its bottom
    const full: Box = { top: 12, left: 36, width: 1208, height: 300 };
    // band below: 800 − 312 − 24 = 464 ≥ 380
    expect(placeTourCard(full, { width: 1280, height: 800 }, card)).toEqual({
      side: 'below',
      left: 420,
      top: 324,
      width: 440,
      height: 380,
      maxHeight: 464,
    });
    // near the bottom of the page it could not scroll up: above it
    const low: Box = { top: 500, left: 36, width: 1208, height: 250 };
    expect(placeTourCard(low, { width: 1280, height: 800 }, card)).toMatchObject({
      side: 'above',
      top: 500 - 12 - 380,
      height: 380,
    });
  });

  it('on a 390 px phone the card spans the screen below the target, as tall as the band allows', () => {
    const t: Box = { top: 12, left: 8, width: 374, height: 600 };
    // band: 844 − 612 − 24 = 208
    expect(placeTourCard(t, { width: 390, height: 844 }, card)).toEqual({
      side: 'below',
      left: 12,
      top: 624,
      width: 366,
      height: 208,
      maxHeight: 208,
    });
  });

  it('never overlaps a target that fits with a card of the least height, wherever the tour could leave it', () => {
    for (const view of [
      { width: 1280, height: 800 },
      { width: 390, height: 844 },
      { width: 800, height: 600 },
    ]) {
      for (let h = 10; h <= view.height; h += 37) {
        for (const w of [120, 360, view.width - 24]) {
          for (const left of [12, Math.max(12, view.width - w - 12)]) {
            const full: Box = { top: 0, left, width: w, height: h };
            const part = visiblePart(full, view.height);
            // scrolled to the top margin, or left at the bottom of the page
            for (const top of [12, 24, view.height - part.height - 30]) {
              if (top < 12) continue;
              const target = { ...part, top };
              for (const c of [card, { width: 440, height: 900 }, { width: 300, height: 160 }]) {
                const p = placeTourCard(target, view, c);
                expect(overlaps(p, target), JSON.stringify({ view, target, c, p })).toBe(false);
                expect(
                  p.top >= 0 && p.top + p.height <= view.height && p.left >= 0 && p.left + p.width <= view.width,
                  JSON.stringify({ view, target, p }),
                ).toBe(true);
                expect(p.height).toBeGreaterThanOrEqual(Math.min(c.height, 150));
              }
            }
          }
        }
      }
    }
  });

  it('gives the card 45 % of a phone screen: a tall target shows its top above a card that reads without scrolling', () => {
    const view = { width: 390, height: 844 };
    expect(minCardHeight(view)).toBe(380); // round(0.45 × 844)
    expect(minCardHeight({ width: 1280, height: 800 })).toBe(150);
    // Run setup's first group at 390 px: about 700 px tall, scrolled to 24 px from the top.
    const part = visiblePart({ top: 24, left: 8, width: 374, height: 700 }, view.height, { minHeight: 380 });
    expect(part.height).toBe(844 - 380 - 48); // 416
    const p = placeTourCard(part, view, { width: 440, height: 520 }, { minHeight: 380 });
    expect(p.side).toBe('below');
    expect(p.height).toBeGreaterThanOrEqual(380);
    expect(overlaps(p, part)).toBe(false);
  });

  it('cuts a target wider than the screen to the screen (the ring never runs off a phone)', () => {
    // A 547 px table inside a 390 px screen, scrolled sideways by nothing: left 8, right 555.
    const part = visiblePart({ top: 24, left: 8, width: 547, height: 200 }, 844, { viewWidth: 390 });
    expect([part.left, part.width]).toEqual([8, 382]);
    // scrolled 100 px to the right: it starts off screen on the left
    const scrolled = visiblePart({ top: 24, left: -92, width: 547, height: 200 }, 844, { viewWidth: 390 });
    expect([scrolled.left, scrolled.width]).toEqual([0, 390]);
    // a target inside the screen is left as it is
    expect(visiblePart({ top: 24, left: 8, width: 300, height: 200 }, 844, { viewWidth: 390 })).toEqual({
      top: 24,
      left: 8,
      width: 300,
      height: 200,
    });
  });

  it('points at the top of a target too tall to share the screen', () => {
    expect(visiblePart({ top: 0, left: 0, width: 300, height: 2000 }, 844)).toEqual({
      top: 0,
      left: 0,
      width: 300,
      height: 844 - 150 - 48,
    });
    expect(visiblePart({ top: 0, left: 0, width: 300, height: 400 }, 844).height).toBe(400);
  });
});
