/** Saving a file from the page: text (CSV, JSON) or a data URL (a chart's PNG). */

export function downloadUrl(fileName: string, url: string): void {
  const a = document.createElement('a');
  a.href = url;
  a.download = fileName;
  a.rel = 'noopener';
  document.body.appendChild(a);
  a.click();
  a.remove();
}

export function downloadText(fileName: string, mime: string, text: string): void {
  const url = URL.createObjectURL(new Blob([text], { type: `${mime};charset=utf-8` }));
  downloadUrl(fileName, url);
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}
