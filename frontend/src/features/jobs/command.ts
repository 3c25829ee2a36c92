/**
 * The wizard's Command field is one line of text; the API takes the container's argv (a list
 * of strings). This splits the line the way a POSIX shell splits words, without the rest of a
 * shell (no variables, globs or pipes), so that `--name "my run"` stays one argument:
 *
 * - spaces and tabs (and line breaks) separate arguments; several in a row count as one;
 * - '…' is literal: nothing inside is special;
 * - "…" is literal except \" and \\ (any other backslash is kept as typed);
 * - outside quotes a backslash makes the next character literal (`my\ run`, `\"`);
 * - quoted and unquoted parts next to each other join into one argument (`--name="a b"`),
 *   and "" or '' alone is an empty argument.
 *
 * Text that does not split (an unclosed quote, a backslash with nothing after it) is an error
 * rather than a guess, so the user sees it on the field before anything runs.
 */

/** Why a command line could not be split; each has a message under `submit.commandErrors`. */
export type SplitError = 'unclosedSingle' | 'unclosedDouble' | 'trailingBackslash';

export type SplitResult = { ok: true; argv: string[] } | { ok: false; error: SplitError };

const SPACE = new Set([' ', '\t', '\n', '\r']);

export function splitCommand(text: string): SplitResult {
  const argv: string[] = [];
  let word = '';
  // Whether a word has begun: "" starts an (empty) argument although `word` stays ''.
  let inWord = false;
  let i = 0;
  while (i < text.length) {
    const c = text.charAt(i);
    if (SPACE.has(c)) {
      if (inWord) argv.push(word);
      word = '';
      inWord = false;
      i += 1;
    } else if (c === "'") {
      const end = text.indexOf("'", i + 1);
      if (end < 0) return { ok: false, error: 'unclosedSingle' };
      word += text.slice(i + 1, end);
      inWord = true;
      i = end + 1;
    } else if (c === '"') {
      i += 1;
      for (;;) {
        if (i >= text.length) return { ok: false, error: 'unclosedDouble' };
        const d = text.charAt(i);
        if (d === '"') break;
        const next = text.charAt(i + 1);
        if (d === '\\' && (next === '"' || next === '\\')) {
          word += next;
          i += 2;
        } else {
          word += d;
          i += 1;
        }
      }
      inWord = true;
      i += 1;
    } else if (c === '\\') {
      if (i + 1 >= text.length) return { ok: false, error: 'trailingBackslash' };
      word += text.charAt(i + 1);
      inWord = true;
      i += 2;
    } else {
      word += c;
      inWord = true;
      i += 1;
    }
  }
  if (inWord) argv.push(word);
  return { ok: true, argv };
}

/**
 * What the API takes as `command` (apps/jobs JobSerializer): at most 64 items of at most 1000
 * characters, each kept as sent (an empty one or one with spaces at its ends included).
 */
export const MAX_ARGS = 64;
export const MAX_ARG_LENGTH = 1000;

export type CommandError = SplitError | 'tooMany' | 'tooLong';

export type CommandResult =
  | { ok: true; argv: string[] }
  /** `arg`: the 1-based number of the argument at fault, where there is one. */
  | { ok: false; error: CommandError; arg?: number };

/** The Command field's text as the argv to submit, or why it cannot be submitted as typed. */
export function parseCommand(text: string): CommandResult {
  const split = splitCommand(text);
  if (!split.ok) return split;
  const { argv } = split;
  if (argv.length > MAX_ARGS) return { ok: false, error: 'tooMany' };
  for (const [i, arg] of argv.entries()) {
    if (arg.length > MAX_ARG_LENGTH) return { ok: false, error: 'tooLong', arg: i + 1 };
  }
  return split;
}
