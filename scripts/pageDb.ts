/**
 * Reads the app's IndexedDB (database `pact-lab`, src/storage/schema.ts) from a Playwright
 * page: every run record and metric row, as the trainer worker wrote them. Shared by the
 * experiment runner (scripts/browserExperiment.ts) and the e2e specs.
 */
import type { Page } from '@playwright/test';
import type { MetricRow, RunRecord } from '../src/storage/schema';

export async function readPageDb(page: Page): Promise<{ runs: RunRecord[]; metrics: MetricRow[] }> {
  return page.evaluate(async () => {
    const db = await new Promise<IDBDatabase>((res, rej) => {
      const r = indexedDB.open('pact-lab');
      r.onsuccess = () => res(r.result);
      r.onerror = () => rej(r.error);
    });
    const all = <T>(store: string) =>
      new Promise<T[]>((res, rej) => {
        const q = db.transaction(store).objectStore(store).getAll();
        q.onsuccess = () => res(q.result as T[]);
        q.onerror = () => rej(q.error);
      });
    const out = { runs: await all<RunRecord>('runs'), metrics: await all<MetricRow>('metrics') };
    db.close();
    return out;
  });
}
