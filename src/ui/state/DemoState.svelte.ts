/**
 * The recorded demo run (`public/demo/demo-run.json`), loaded once, for the Live charts
 * and the Rollout inspector to show before any training; or (`url`) the search demo run, whose
 * step times estimate a search run. Absent file: `status` says so.
 */
import { DEMO_RUN_LABEL, DEMO_RUN_URL, fetchDemoRun, type DemoRun } from '../demoRun';
import { mergeMetricPoints, toMetricPoint, type RunMetrics } from '../metricSeries';

export class DemoState {
  constructor(private readonly url: string = DEMO_RUN_URL) {}

  status = $state<'loading' | 'absent' | 'ready' | 'error'>('loading');
  /** Why it is absent, or what is wrong with it. */
  detail = $state<string | null>(null);
  run = $state.raw<DemoRun | null>(null);

  /** The demo's rows as one chart run, labelled as recorded. */
  metrics = $derived<RunMetrics | null>(
    this.run
      ? {
          runId: 'demo',
          label: `${DEMO_RUN_LABEL} (${String(this.run.config.recipe ?? 'recipe?')})`,
          points: mergeMetricPoints(this.run.metrics.map(toMetricPoint), this.run.evals.map(toMetricPoint)),
        }
      : null,
  );

  async load(baseUrl: string = import.meta.env.BASE_URL ?? '/'): Promise<void> {
    const res = await fetchDemoRun(fetch, `${baseUrl}${this.url}`);
    if (res.status === 'ready') {
      this.run = res.run;
      this.status = 'ready';
      this.detail = null;
    } else {
      this.status = res.status;
      this.detail = res.status === 'absent' ? res.reason : res.message;
    }
  }
}
