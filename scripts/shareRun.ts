/**
 * `node --import tsx scripts/shareRun.ts experiments/A.json "RUN_ID" experiments/B.json "RUN_ID" [--results DIR]`:
 * a finished run of A stands for B's row of the same configuration (src/run/shareRun.ts).
 */
import { shareRun } from '../src/run/shareRun';

const args = process.argv.slice(2);
const at = args.indexOf('--results');
const results = at >= 0 ? args.splice(at, 2)[1] : 'results';
if (args.length !== 4) {
  console.error('usage: scripts/shareRun.ts FROM.json FROM_ID TO.json TO_ID [--results DIR]');
  process.exit(2);
}
const r = shareRun(args[0], args[1], args[2], args[3], results);
console.log(`${r.from} -> ${r.to}`);
