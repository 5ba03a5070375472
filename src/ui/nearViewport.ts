/**
 * Calls `onNear` once, the first time `node` comes within `marginPx` of the viewport
 * (at once where IntersectionObserver is missing). The trace panels use it to build
 * traces and load the tokenizer only when they are about to be seen.
 * @returns a function that stops watching
 */
export function watchNearViewport(node: Element, onNear: () => void, marginPx = 300): () => void {
  if (typeof IntersectionObserver !== 'function') {
    onNear();
    return () => {};
  }
  const observer = new IntersectionObserver(
    (entries) => {
      if (!entries.some((e) => e.isIntersecting)) return;
      observer.disconnect();
      onNear();
    },
    { rootMargin: `${marginPx}px` },
  );
  observer.observe(node);
  return () => observer.disconnect();
}
