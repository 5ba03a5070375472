/**
 * `pact <command> [flags]`: the Node entry point. Commands register themselves in
 * `registry.ts`; importing `./commands` loads them all.
 */
import { getCommand, listCommands, type CliIO } from './registry';
import './commands';

const defaultIO: CliIO = {
  out: (line) => process.stdout.write(line + '\n'),
  err: (line) => process.stderr.write(line + '\n'),
};

export function helpText(): string {
  const cmds = listCommands();
  const width = Math.max(...cmds.map((c) => c.name.length));
  return [
    'pact: PACT Lab on the command line',
    '',
    'usage: pact <command> [flags]   (pact <command> --help for its flags)',
    '',
    'commands:',
    ...cmds.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
  ].join('\n');
}

export async function main(argv: string[], io: CliIO = defaultIO): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    io.out(helpText());
    return name ? 0 : 1;
  }
  try {
    const cmd = getCommand(name);
    if (rest.includes('--help') || rest.includes('-h')) {
      io.out(cmd.usage);
      return 0;
    }
    return await cmd.run(rest, io);
  } catch (e) {
    io.err(`pact ${name}: ${e instanceof Error ? e.message : String(e)}`);
    return 2;
  }
}
