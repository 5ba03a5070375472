/**
 * The CLI's command registry. Each command lives in `src/cli/commands/<name>.ts`
 * and registers itself here; `pact --help` is built from the registry.
 */
export interface CliIO {
  out: (line: string) => void;
  err: (line: string) => void;
}

export interface CliCommand {
  name: string;
  /** One line for `pact --help`. */
  summary: string;
  /** Full usage text for `pact <name> --help`. */
  usage: string;
  /** Returns the process exit code. */
  run(args: string[], io: CliIO): Promise<number>;
}

const commands = new Map<string, CliCommand>();

export function registerCommand(cmd: CliCommand): void {
  if (commands.has(cmd.name)) throw new Error(`CLI command "${cmd.name}" is registered twice`);
  commands.set(cmd.name, cmd);
}

export function getCommand(name: string): CliCommand {
  const cmd = commands.get(name);
  if (!cmd) {
    throw new Error(`unknown command "${name}"; valid commands: ${[...commands.keys()].sort().join(', ')}`);
  }
  return cmd;
}

export function listCommands(): CliCommand[] {
  return [...commands.values()].sort((a, b) => a.name.localeCompare(b.name));
}

/**
 * Minimal flag parser: `--name value`, `--name=value`, boolean `--flag`.
 * `booleans` lists flags that take no value. Unknown flags are an error naming the flag.
 */
export function parseFlags(
  args: string[],
  spec: { values: string[]; booleans?: string[] },
): { flags: Record<string, string | boolean>; positional: string[] } {
  const flags: Record<string, string | boolean> = {};
  const positional: string[] = [];
  const booleans = new Set(spec.booleans ?? []);
  const values = new Set(spec.values);
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (!a.startsWith('--')) {
      positional.push(a);
      continue;
    }
    const eq = a.indexOf('=');
    const name = eq >= 0 ? a.slice(2, eq) : a.slice(2);
    if (booleans.has(name)) {
      if (eq >= 0) throw new Error(`flag --${name} takes no value`);
      flags[name] = true;
    } else if (values.has(name)) {
      const v = eq >= 0 ? a.slice(eq + 1) : args[++i];
      if (v === undefined) throw new Error(`flag --${name} needs a value`);
      flags[name] = v;
    } else {
      const known = [...values, ...booleans].map((f) => `--${f}`).join(', ');
      throw new Error(`unknown flag --${name}; valid flags: ${known || '(none)'}`);
    }
  }
  return { flags, positional };
}
