#!/usr/bin/env node
// The lab's command line: `npm run lab -- <command> [flags]`, or `herdless-lab` once installed.
import { CommanderError, type Command } from 'commander';
import { isInvalidOptionError } from 'herdless';
import { buildProgram } from './cli/program.js';
import { closestName } from './closest.js';
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
function withSuggestion(message: string, program: Command, argv: readonly string[]): string {
  const [first, second] = message.split('\n');
  const offered = /^\(Did you mean (?:one of )?(.+)\?\)$/.exec(second ?? '');
  const typo = /^unknown option '(.+)'$/.exec(first!)?.[1];
  if (!offered) {
    const elsewhere = typo === undefined ? undefined : optionElsewhere(program, argv, typo);
    return elsewhere === undefined ? first! : `${first!} (${elsewhere})`;
  }
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

/**
 * For an option commander found nothing like: the command's own option it starts or misspells
 * (`fleet --flush` → `--flush-interval`), else the like-named option other commands take: `all`
 * has no `--format`, so commander offers nothing for `all --frmat json`, yet the user meant the
 * experiments' `--format`. Says which commands take it, so the fix is plain.
 */
function optionElsewhere(program: Command, argv: readonly string[], typo: string): string | undefined {
  // The command run: the words of argv that name subcommands; none names the default command, `all`.
  let command = program;
  for (const word of argv.slice(2)) {
    const sub = command.commands.find((c) => c.name() === word);
    if (sub === undefined) break;
    command = sub;
  }
  if (command === program) command = program.commands.find((c) => c.name() === 'all') ?? program;
  const own = new Set(command.options.map((o) => o.long));
  // Commander offers a name only within its own similarity bound: `--flush` is the start of
  // `--flush-interval`, which closestName counts as one edit.
  const ownNear = closestName(typo.replace(/^--?/, ''), [...own].filter((f) => f !== undefined).map((f) => f.slice(2)));
  if (ownNear !== undefined) return `did you mean --${ownNear}?`;
  const takers = new Map<string, string[]>();
  const visit = (c: Command, path: string): void => {
    for (const o of c.options) if (o.long !== undefined && !own.has(o.long) && c !== command) takers.set(o.long, [...(takers.get(o.long) ?? []), path]);
    for (const sub of c.commands) visit(sub, `${path === '' ? '' : `${path} `}${sub.name()}`);
  };
  for (const sub of program.commands) visit(sub, sub.name());
  const flags = [...takers.keys()];
  const near = closestName(typo.replace(/^--?/, ''), flags.map((f) => f.slice(2)));
  if (near === undefined) return undefined;
  const flag = `--${near}`;
  const name = command === program ? 'herdless-lab' : command.name();
  return `${flag === typo ? '' : `did you mean ${flag}? `}${name} has no ${flag}; it is an option of ${takers.get(flag)!.join(', ')}`;
}

/** `<lead> (did you mean herd?)` for `hred`, or `<lead> (commands: …)` when no command is close. */
function unknownCommand(lead: string, word: string, names: readonly string[]): UsageError {
  const near = closestName(word, names);
  return new UsageError(`${lead} (${near === undefined ? `commands: ${names.join(', ')}` : `did you mean ${near}?`})`);
}

const program = buildProgram(io);
try {
  const known = (name: string): boolean => program.commands.some((c) => c.name() === name);
  const names = [...program.commands.map((c) => c.name()), 'help'];
  const first = process.argv[2];
  // `help [command]` is commander's own command, listed by --help but not among program.commands.
  if (first !== undefined && first !== 'help' && !first.startsWith('-') && !known(first)) {
    throw unknownCommand(`unknown command ${quote(first)}`, first, names);
  }
  const topic = process.argv[3];
  if (first === 'help' && topic !== undefined && !known(topic)) throw unknownCommand(`help ${quote(topic)}: unknown command`, topic, names);
  let argv = process.argv;
  if (first === 'help' && argv.length > 4) {
    // `help live herd`: commander's help command reads one word; a subcommand's help is `live herd --help`.
    const path = argv.slice(3);
    let command = program;
    for (const [i, word] of path.entries()) {
      const sub = command.commands.find((c) => c.name() === word);
      if (sub === undefined) {
        const names = command.commands.map((c) => c.name());
        const near = closestName(word, names);
        const hint = names.length === 0 ? ', which has none' : ` (${near === undefined ? '' : `did you mean ${near}? `}choose from ${names.join(', ')})`;
        throw new UsageError(`help ${path.slice(0, i + 1).join(' ')}: ${quote(word)} is not a command of ${path.slice(0, i).join(' ')}${hint}`);
      }
      command = sub;
    }
    argv = [...argv.slice(0, 2), ...path, '--help'];
  }
  await program.parseAsync(argv);
} catch (error) {
  if (error instanceof CommanderError) {
    if (error.exitCode === 0 || error.code === 'commander.helpDisplayed' || error.code === 'commander.version') process.exit(0);
    io.err(`herdless-lab: ${oneLine(withSuggestion(error.message.replace(/^error: /, ''), program, process.argv))}`);
    process.exit(2);
  }
  if (error instanceof UsageError || isInvalidOptionError(error)) {
    io.err(`herdless-lab: ${oneLine(error.message)}`);
    process.exit(2);
  }
  throw error;
}
