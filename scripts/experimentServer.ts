/**
 * The app server of the experiment runner (scripts/browserExperiment.ts): builds the app
 * with `vite build` and serves it with `vite preview`, waiting until it answers.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

export function runToEnd(cmd: string, args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd: ROOT, stdio: ['ignore', 'inherit', 'inherit'] });
    child.on('error', reject);
    child.on('exit', (code) =>
      code === 0 ? resolve() : reject(new Error(`${cmd} ${args.join(' ')} exited with ${code}`)),
    );
  });
}

export async function waitForHttp(url: string, timeoutMs: number, child: ChildProcess): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if (child.exitCode !== null) throw new Error(`vite preview exited with ${child.exitCode} before serving ${url}`);
    try {
      const res = await fetch(url);
      if (res.ok) return;
    } catch {
      // not up yet
    }
    await new Promise((r) => setTimeout(r, 300));
  }
  throw new Error(`nothing answered at ${url} within ${timeoutMs / 1000} s`);
}

/** Builds the app into `distDir` and serves it; returns the URL and a stop function. */
export async function startServer(
  distDir: string,
  port: number,
  log: (line: string) => void,
): Promise<{ baseUrl: string; stop: () => void }> {
  const vite = path.join(ROOT, 'node_modules/vite/bin/vite.js');
  log(`building the app into ${distDir}/ …`);
  await runToEnd(process.execPath, [vite, 'build', '--logLevel', 'warn', '--outDir', distDir]);
  // Its output goes to the runner's: a preview that never answers (seen once, not reproduced)
  // then shows what it printed.
  const child = spawn(
    process.execPath,
    [vite, 'preview', '--host', '127.0.0.1', '--port', String(port), '--strictPort', '--outDir', distDir],
    {
      cwd: ROOT,
      stdio: ['ignore', 'inherit', 'inherit'],
    },
  );
  const baseUrl = `http://127.0.0.1:${port}`;
  const stop = () => {
    if (child.exitCode === null) child.kill('SIGTERM');
  };
  try {
    // 3 minutes: a niced runner on a machine whose cores are busy can take over one to start vite preview.
    await waitForHttp(baseUrl, 180_000, child);
  } catch (e) {
    stop();
    throw e;
  }
  return { baseUrl, stop };
}
