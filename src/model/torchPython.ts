/** Finding a Python with PyTorch for the reference comparisons (bench, pretraining fixtures); Node only. */
import { spawnSync } from 'node:child_process';

/** The first of /usr/bin/python3, python3 that can import torch, or a reason none can. */
export function findTorchPython(): { python?: string; reason?: string } {
  for (const python of ['/usr/bin/python3', 'python3']) {
    const r = spawnSync(python, ['-c', 'import torch'], { stdio: 'ignore' });
    if (r.status === 0) return { python };
  }
  return { reason: 'no python3 with torch (tried /usr/bin/python3, python3)' };
}
