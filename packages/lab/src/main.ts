#!/usr/bin/env node
// The lab's command line: `npm run lab -- <command> [flags]`, or `herdless-lab` once installed.
import { CommanderError } from 'commander';
import { isInvalidOptionError } from 'herdless';
import { buildProgram } from './cli/program.js';
import { escapeControls, quote, shorten } from './text.js';
import { UsageError } from './usage-error.js';

// A reader that stops early (`… | head`) closes the pipe: that ends the run quietly, not with a stack trace.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') process.exit(0);
  throw error;
});

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

try {
  const program = buildProgram(io);
  const first = process.argv[2];
  if (first !== undefined && !first.startsWith('-') && !program.commands.some((c) => c.name() === first)) {
    throw new UsageError(`unknown command ${quote(first)} (commands: ${program.commands.map((c) => c.name()).join(', ')})`);
  }
  await program.parseAsync(process.argv);
} catch (error) {
  if (error instanceof CommanderError) {
    if (error.exitCode === 0 || error.code === 'commander.helpDisplayed' || error.code === 'commander.version') process.exit(0);
    io.err(`herdless-lab: ${oneLine(error.message.replace(/^error: /, '').split('\n')[0]!)}`);
    process.exit(2);
  }
  if (error instanceof UsageError || isInvalidOptionError(error)) {
    io.err(`herdless-lab: ${oneLine(error.message)}`);
    process.exit(2);
  }
  throw error;
}
