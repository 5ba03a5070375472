/**
 * Test helper (tests only): an FTRL task file for the VeRL export's tests, not benchmark data.
 * Line 1 and 2 are run/ftrlTestLines.ts' hand-written capital and river tasks (with gold calls),
 * line 3 holds tools that loop, call os.system, print, return structures and long text, line 4
 * tools that probe their process (environment, folder, files, memory, rlimits, processes), line 5
 * another capital task without gold calls.
 */
import { FTRL_INSTRUCTION } from '../../envs/ftrl/importFtrl';
import { capitalCodeLine, capitalLine, riverLine } from '../../run/ftrlTestLines';

/** An FTRL line with several Python tools, each with one string parameter `x`. */
export function toolLine(question: string, codes: Record<string, string>, answer: string): string {
  const tools = Object.keys(codes).map((name) => ({
    type: 'function',
    function: {
      name,
      description: `The ${name} tool.`,
      parameters: { type: 'object', properties: { x: { type: 'string', description: 'x' } }, required: ['x'] },
    },
  }));
  const first = Object.keys(codes)[0];
  return JSON.stringify({
    messages: [{ role: 'user', content: `${FTRL_INSTRUCTION}\nQuestion: ${question}` }],
    tools: JSON.stringify(tools),
    codes: JSON.stringify(codes),
    unsolved_set: JSON.stringify({ [first]: [answer] }),
    answer,
    data_source: 'self/single_hop',
  });
}

export const PROBE_CODES: Record<string, string> = {
  loop: 'def loop(x):\n    while True:\n        pass\n',
  shell: "def shell(x):\n    import os\n    return str(os.system('echo hi'))\n",
  shaped: "def shaped(x):\n    print('noise')\n    return {'x': x, 'n': [1, 2.5, None, True], 'é': 'ü'}\n",
  long: "def long(x):\n    return 'ab' * 3000\n",
  plain: 'def plain(x):\n    return 7 / 2\n',
  narrow: 'def narrow(y):\n    return y\n',
};

export const CONTAIN_CODES: Record<string, string> = {
  environ: 'def environ(x):\n    import json, os\n    return json.dumps(dict(os.environ))\n',
  where: 'def where(x):\n    import json, os\n    return json.dumps([os.getcwd(), os.listdir(".")])\n',
  passwd: "def passwd(x):\n    return open('/etc/passwd').read()[:5]\n",
  grab: 'def grab(x):\n    return str(len(bytearray(3 * 1024 ** 3)))\n',
  scribble:
    "def scribble(x):\n    with open('big', 'wb') as f:\n        f.write(b'0' * (9 * 1024 * 1024))\n    return 'written'\n",
  limits: `def limits(x):
    import json, resource
    return json.dumps({k: resource.getrlimit(getattr(resource, k)) for k in ('RLIMIT_CPU', 'RLIMIT_AS', 'RLIMIT_FSIZE', 'RLIMIT_NPROC', 'RLIMIT_CORE')})
`,
  spawn: "def spawn(x):\n    import subprocess\n    return subprocess.run(['true']).returncode\n",
};

export const FILE_LINES = [
  capitalLine({ goldArgs: { code: 'FR' } }),
  riverLine({ goldArgs: { name: 'Nile' } }),
  toolLine('What does the loop say?', PROBE_CODES, 'nothing'),
  toolLine('Where am I?', CONTAIN_CODES, 'here'),
  capitalCodeLine({ code: 'DE', decoys: 1 }),
];
