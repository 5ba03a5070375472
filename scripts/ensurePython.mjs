#!/usr/bin/env node
// Makes sure the Python the reference tests use has what they import: Debian's PyTorch (on
// OpenBLAS's threaded kernels: without libopenblas0-pthread Debian's torch runs on a
// reference BLAS about 18× slower), OmegaConf (VeRL's config objects, for the export's
// parity tests against ../shared/verl) and NumPy. Installed with apt-get when running as
// root on Debian; otherwise one line names what is missing, and the tests that need it
// skip, each saying why. Never fails the test run: those tests are the only ones it touches.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

const PYTHON = '/usr/bin/python3';
const MODULES = [
  ['torch', 'python3-torch'],
  ['omegaconf', 'python3-omegaconf'],
  ['numpy', 'python3-numpy'],
];
const PACKAGES_ALWAYS = ['libopenblas0-pthread'];

const canImport = (module) =>
  existsSync(PYTHON) && spawnSync(PYTHON, ['-c', `import ${module}`], { stdio: 'ignore' }).status === 0;

const missing = MODULES.filter(([module]) => !canImport(module));
if (missing.length === 0) {
  console.log(`Python for the reference tests: ${PYTHON} (torch, omegaconf, numpy)`);
} else {
  const packages = [...missing.map(([, pkg]) => pkg), ...PACKAGES_ALWAYS];
  const names = missing.map(([module]) => module).join(', ');
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  if (!isRoot || !existsSync('/usr/bin/apt-get')) {
    console.warn(
      `${PYTHON} cannot import ${names}: the PyTorch and VeRL reference tests will skip ` +
        `(install with \`sudo apt-get install ${packages.join(' ')}\`).`,
    );
  } else {
    console.log(`${PYTHON} cannot import ${names}: installing ${packages.join(' ')} with apt-get…`);
    const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
    try {
      execFileSync('apt-get', ['update', '-qq'], { stdio: 'inherit', env });
      execFileSync('apt-get', ['install', '-y', '-qq', '--no-install-recommends', ...packages], {
        stdio: 'inherit',
        env,
      });
    } catch (e) {
      console.warn(`apt-get failed (${e.message}); the tests that need ${names} will skip.`);
    }
    const still = MODULES.filter(([module]) => !canImport(module)).map(([module]) => module);
    console.log(still.length ? `still missing: ${still.join(', ')} (those tests skip)` : `installed: ${names}`);
  }
}
