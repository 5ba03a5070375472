/**
 * Where the tour's card goes so that it never covers what the step points at: beside the
 * target when the screen is wide enough, else in the larger band below or above it, with the
 * card's height capped to that band (its text scrolls). A target taller than the screen can
 * show beside a card of the least height is pointed at by its top part. All in viewport pixels.
 */

export interface Box {
  top: number;
  left: number;
  width: number;
  height: number;
}

export interface CardPlacement extends Box {
  /** The most height the card may take (its text scrolls within it). */
  maxHeight: number;
  side: 'right' | 'left' | 'below' | 'above';
}

export interface PlacementOptions {
  /** Space kept between the card, the target and the screen's edges. */
  gap?: number;
  /** The card's least useful height (count, title, a few lines, the buttons). */
  minHeight?: number;
  /** Side placement only from this screen width up. */
  minSideWidth?: number;
  /** The viewport's width: the part is also cut to the screen's width (a wide table scrolls sideways). */
  viewWidth?: number;
}

/**
 * The card's least height on this screen: 150 px where it can sit beside or under a target,
 * 45 % of the screen on a phone (< 600 px wide), where a 150 px card would show two lines at a
 * time and scroll; a tall target then shows its top part above the card.
 */
export function minCardHeight(view: { width: number; height: number }): number {
  return view.width < 600 ? Math.max(150, Math.round(0.45 * view.height)) : 150;
}

/**
 * The part of a target the card must leave visible: all of it, or its top when it is too tall
 * to share the screen with a card of the least height (the tour scrolls targets to 2 × `gap`
 * from the top, so the room is the screen less that margin, the card and the gaps around it).
 */
export function visiblePart(target: Box, viewHeight: number, o: PlacementOptions = {}): Box {
  const { gap = 12, minHeight = 150, viewWidth } = o;
  const room = viewHeight - minHeight - 4 * gap;
  let part = target.height > room ? { ...target, height: Math.max(0, room) } : target;
  if (viewWidth !== undefined) {
    const left = Math.max(part.left, 0);
    const right = Math.min(part.left + part.width, viewWidth);
    if (left !== part.left || right !== part.left + part.width)
      part = { ...part, left, width: Math.max(0, right - left) };
  }
  return part;
}

/**
 * `target`: the (visible part of the) target's box; `view`: the viewport's size; `card`: the
 * card's natural size. Returns the card's box and side.
 */
export function placeTourCard(
  target: Box,
  view: { width: number; height: number },
  card: { width: number; height: number },
  o: PlacementOptions = {},
): CardPlacement {
  const { gap = 12, minHeight = 150, minSideWidth = 900 } = o;
  const width = Math.min(card.width, view.width - 2 * gap);
  const fullHeight = view.height - 2 * gap;
  const clamp = (x: number, lo: number, hi: number) => Math.max(lo, Math.min(hi, x));
  const right = target.left + target.width;
  const bottom = target.top + target.height;

  if (view.width >= minSideWidth) {
    const height = Math.min(card.height, fullHeight);
    const top = clamp(target.top, gap, view.height - gap - height);
    if (view.width - right - 2 * gap >= width)
      return { side: 'right', left: right + gap, top, width, height, maxHeight: fullHeight };
    if (target.left - 2 * gap >= width)
      return { side: 'left', left: target.left - gap - width, top, width, height, maxHeight: fullHeight };
  }
  const left = clamp(target.left + target.width / 2 - width / 2, gap, view.width - gap - width);
  const below = view.height - bottom - 2 * gap;
  const above = target.top - 2 * gap;
  const useBelow = below >= card.height || (above < card.height && below >= above);
  if (useBelow) {
    const maxHeight = Math.max(Math.min(below, fullHeight), Math.min(minHeight, fullHeight));
    const height = Math.min(card.height, maxHeight);
    return { side: 'below', left, top: Math.min(bottom + gap, view.height - gap - height), width, height, maxHeight };
  }
  const maxHeight = Math.max(Math.min(above, fullHeight), Math.min(minHeight, fullHeight));
  const height = Math.min(card.height, maxHeight);
  return { side: 'above', left, top: Math.max(gap, target.top - gap - height), width, height, maxHeight };
}

/** True when two boxes overlap (touching edges do not). */
export function overlaps(a: Box, b: Box): boolean {
  return a.left < b.left + b.width && b.left < a.left + a.width && a.top < b.top + b.height && b.top < a.top + a.height;
}
