/**
 * Opens the fold that holds a panel (Fold.svelte, the phone layout) and scrolls the panel, or
 * the element given, into view: for links to a panel that may be folded.
 */
export function revealPanel(panelTestId: string, focus?: string): void {
  const panel = document.querySelector<HTMLElement>(`[data-testid="${panelTestId}"]`);
  if (!panel) return;
  panel.closest('[data-fold]')?.dispatchEvent(new CustomEvent('pact-reveal'));
  requestAnimationFrame(() => {
    const el = (focus ? panel.querySelector<HTMLElement>(focus) : null) ?? panel;
    el.scrollIntoView({ block: 'start' });
    if (focus && el !== panel) el.focus({ preventScroll: true });
  });
}
