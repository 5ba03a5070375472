/**
 * Which saved runs a trainer worker is training right now, in any tab of this browser: the
 * worker holds the Web Lock `pact-run:<id>` for as long as it has the run loaded, and a lock
 * dies with its worker. So a run stored as `running` whose lock nobody holds cannot be alive:
 * its tab was reloaded or closed (the page rewrites it to `interrupted`). The same lock keeps
 * two tabs from resuming one run at once.
 */

const PREFIX = 'pact-run:';

interface LockInfo {
  name?: string;
}
interface LockManagerLike {
  request(name: string, options: { ifAvailable: boolean }, callback: (lock: unknown) => Promise<void>): Promise<void>;
  query(): Promise<{ held?: LockInfo[] }>;
}

function lockManager(): LockManagerLike | null {
  const nav = (globalThis as { navigator?: { locks?: LockManagerLike } }).navigator;
  return nav?.locks ?? null;
}

/** True when this browser offers Web Locks (then liveness can be read; else it cannot). */
export function hasRunLocks(): boolean {
  return lockManager() !== null;
}

/**
 * Takes the run's lock; resolves with the function that gives it back. Throws when another
 * worker holds it (the run is training in another tab). Without Web Locks it holds nothing.
 */
export async function holdRunLock(runId: string): Promise<() => void> {
  const locks = lockManager();
  if (!locks) return () => {};
  let release: () => void = () => {};
  const isHeld = await new Promise<boolean>((resolve, reject) => {
    locks
      .request(`${PREFIX}${runId}`, { ifAvailable: true }, (lock) => {
        if (!lock) {
          resolve(false);
          return Promise.resolve();
        }
        resolve(true);
        return new Promise<void>((done) => (release = done));
      })
      .catch(reject);
  });
  if (!isHeld) throw new Error(`run "${runId}" is training in another tab of this browser: stop it there first`);
  return () => release();
}

/** Ids of the runs whose lock is held now (in any tab), or null when the browser has no Web Locks. */
export async function queryLiveRunIds(): Promise<Set<string> | null> {
  const locks = lockManager();
  if (!locks) return null;
  const { held = [] } = await locks.query();
  return new Set(held.flatMap((l) => (l.name?.startsWith(PREFIX) ? [l.name.slice(PREFIX.length)] : [])));
}
