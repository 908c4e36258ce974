#!/usr/bin/env node
// The lab's command line: `npm run lab -- <command> [flags]`, or `herdless-lab` once installed.
import { CommanderError } from 'commander';
import { isInvalidOptionError } from 'herdless';
import { buildProgram } from './cli/program.js';
import { endWithNpmShell } from './npm-parent.js';
import { escapeControls, quote, shorten } from './text.js';
import { UsageError } from './usage-error.js';

// A reader that stops early (`… | head`) closes the pipe: that ends the run quietly, not with a stack trace.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') process.exit(0);
  throw error;
});

if (process.env.npm_lifecycle_event !== undefined) endWithNpmShell();

/**
 * Error messages are one short line: a JSON parser's message may quote the file's own line breaks,
 * and a name from a file may hold escape sequences (escaped, never sent to the terminal raw).
 */
const oneLine = (message: string): string => shorten(message.replace(/\s*[\r\n]+\s*/g, ' '), 400);

// Everything the lab prints goes through here: control characters from config files, flags or file
// names are escaped (`\u001b`), in tables and warnings alike. JSON output stays valid and means the
// same (JSON strings read `\u009b` as the character), and CSV holds no controls: the names in it
// are refused with them.
const io = {
  out: (text: string) => process.stdout.write(`${escapeControls(text)}\n`),
  err: (text: string) => process.stderr.write(`${escapeControls(text)}\n`),
};

/**
 * Commander's message for a misspelt option, with its suggestion on the same line. Commander puts
 * the suggestion on a second line, and offers every name at its smallest edit distance: among
 * those, the names that keep more of the typo's first letters go first (`--sead`: `--seeds`, not
 * `--spread`), as a slip of the finger seldom changes how a word starts.
 */
function withSuggestion(message: string): string {
  const [first, second] = message.split('\n');
  const offered = /^\(Did you mean (?:one of )?(.+)\?\)$/.exec(second ?? '');
  const typo = /^unknown option '(.+)'$/.exec(first!)?.[1];
  if (!offered) return first!;
  const names = offered[1]!.split(', ');
  const kept = (name: string): number => {
    let i = 0;
    while (i < name.length && i < (typo ?? '').length && name[i] === typo![i]) i++;
    return i;
  };
  const best = Math.max(...names.map(kept));
  const closest = names.filter((n) => kept(n) === best);
  return `${first!} (did you mean ${closest.length === 1 ? closest[0]! : `one of ${closest.join(', ')}`}?)`;
}

try {
  const program = buildProgram(io);
  const known = (name: string): boolean => program.commands.some((c) => c.name() === name);
  const names = [...program.commands.map((c) => c.name()), 'help'].join(', ');
  const first = process.argv[2];
  // `help [command]` is commander's own command, listed by --help but not among program.commands.
  if (first !== undefined && first !== 'help' && !first.startsWith('-') && !known(first)) {
    throw new UsageError(`unknown command ${quote(first)} (commands: ${names})`);
  }
  const topic = process.argv[3];
  if (first === 'help' && topic !== undefined && !known(topic)) throw new UsageError(`help ${quote(topic)}: unknown command (commands: ${names})`);
  let argv = process.argv;
  if (first === 'help' && argv.length > 4) {
    // `help live herd`: commander's help command reads one word; a subcommand's help is `live herd --help`.
    const path = argv.slice(3);
    let command = program;
    for (const [i, word] of path.entries()) {
      const sub = command.commands.find((c) => c.name() === word);
      if (sub === undefined) {
        const choices = command.commands.map((c) => c.name()).join(', ');
        throw new UsageError(`help ${path.slice(0, i + 1).join(' ')}: ${quote(word)} is not a command of ${path.slice(0, i).join(' ')}${choices === '' ? ', which has none' : ` (choose from ${choices})`}`);
      }
      command = sub;
    }
    argv = [...argv.slice(0, 2), ...path, '--help'];
  }
  await program.parseAsync(argv);
} catch (error) {
  if (error instanceof CommanderError) {
    if (error.exitCode === 0 || error.code === 'commander.helpDisplayed' || error.code === 'commander.version') process.exit(0);
    io.err(`herdless-lab: ${oneLine(withSuggestion(error.message.replace(/^error: /, '')))}`);
    process.exit(2);
  }
  if (error instanceof UsageError || isInvalidOptionError(error)) {
    io.err(`herdless-lab: ${oneLine(error.message)}`);
    process.exit(2);
  }
  throw error;
}
