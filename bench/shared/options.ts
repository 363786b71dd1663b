// Command-line flags of the benchmarks: each one's options.ts turns them (and environment variables) into its
// options; this reads them.

/** A bad command line (the message says why), or --help (an empty message): print the usage. */
export class OptionsError extends Error {}

/**
 * `--flag value`, `--flag=value` and bare `switches` into a map (a switch maps to true). --help throws an
 * empty OptionsError; a positional argument, a flag missing its value or one not in `known` throws its own.
 */
export function readFlags(
  argv: readonly string[],
  switches: readonly string[],
  known: Iterable<string>,
): Map<string, string | true> {
  const flags = new Map<string, string | true>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (!arg.startsWith('--')) throw new OptionsError(`unexpected argument "${arg}"`);
    const eq = arg.indexOf('=');
    if (eq > 0) {
      flags.set(arg.slice(0, eq), arg.slice(eq + 1));
    } else if (switches.includes(arg)) {
      flags.set(arg, true);
    } else {
      const value = argv[i + 1];
      if (value === undefined) throw new OptionsError(`${arg} needs a value`);
      flags.set(arg, value);
      i += 1;
    }
  }
  if (flags.has('--help')) throw new OptionsError('');
  const allowed = new Set(known);
  for (const flag of flags.keys()) if (!allowed.has(flag)) throw new OptionsError(`unknown option ${flag}`);
  return flags;
}

/**
 * A benchmark's entry point: its options from the command line and environment (a bad one prints `usage`
 * and exits 2; --help prints it and exits 0), then `body`, whose number is the exit status; a throw is
 * printed and exits 1. `name` prefixes what goes to standard error.
 */
export function benchMain<O>(
  name: string,
  parse: (argv: readonly string[], env: NodeJS.ProcessEnv) => O,
  usage: string,
  body: (opts: O) => Promise<number>,
): void {
  const run = async (): Promise<number> => {
    let opts: O;
    try {
      opts = parse(process.argv.slice(2), process.env);
    } catch (err) {
      if (!(err instanceof OptionsError)) throw err;
      process.stderr.write(`${err.message ? `${name}: ${err.message}\n` : ''}${usage}\n`);
      return err.message ? 2 : 0;
    }
    return body(opts);
  };
  run().then(
    (code) => {
      process.exitCode = code;
    },
    (err: unknown) => {
      process.stderr.write(`${name}: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
      process.exitCode = 1;
    },
  );
}
