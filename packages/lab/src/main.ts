#!/usr/bin/env node
// The lab's command line: `npm run lab -- <command> [flags]`, or `herdless-lab` once installed.
import { CommanderError } from 'commander';
import { isInvalidOptionError } from 'herdless';
import { buildProgram } from './cli/program.js';
import { UsageError } from './usage-error.js';

// A reader that stops early (`… | head`) closes the pipe: that ends the run quietly, not with a stack trace.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') process.exit(0);
  throw error;
});

/** Error messages are one line: a JSON parser's message may quote the file's own line breaks. */
const oneLine = (message: string): string => message.replace(/\s*[\r\n]+\s*/g, ' ');

const io = {
  out: (text: string) => process.stdout.write(`${text}\n`),
  err: (text: string) => process.stderr.write(`${text}\n`),
};

try {
  const program = buildProgram(io);
  const known = (name: string): boolean => program.commands.some((c) => c.name() === name);
  const names = [...program.commands.map((c) => c.name()), 'help'].join(', ');
  const first = process.argv[2];
  // `help [command]` is commander's own command, listed by --help but not among program.commands.
  if (first !== undefined && first !== 'help' && !first.startsWith('-') && !known(first)) {
    throw new UsageError(`unknown command ${JSON.stringify(first)} (commands: ${names})`);
  }
  const topic = process.argv[3];
  if (first === 'help' && topic !== undefined && !known(topic)) throw new UsageError(`help ${JSON.stringify(topic)}: unknown command (commands: ${names})`);
  await program.parseAsync(process.argv);
} catch (error) {
  if (error instanceof CommanderError) {
    if (error.exitCode === 0 || error.code === 'commander.helpDisplayed' || error.code === 'commander.version') process.exit(0);
    io.err(`herdless-lab: ${error.message.replace(/^error: /, '').split('\n')[0]}`);
    process.exit(2);
  }
  if (error instanceof UsageError || isInvalidOptionError(error)) {
    io.err(`herdless-lab: ${oneLine(error.message)}`);
    process.exit(2);
  }
  throw error;
}
