import { describe, expect, it } from 'vitest';
import { MAX_ARGS, parseCommand, splitCommand } from './command';

const argv = (text: string) => {
  const result = splitCommand(text);
  if (!result.ok) throw new Error(`did not split: ${result.error}`);
  return result.argv;
};

describe('splitCommand', () => {
  it('splits plain words on runs of spaces and tabs', () => {
    expect(argv('torchrun train.py --epochs 90')).toEqual([
      'torchrun',
      'train.py',
      '--epochs',
      '90',
    ]);
    expect(argv('  a \t\t b   c\t')).toEqual(['a', 'b', 'c']);
    expect(argv('')).toEqual([]);
    expect(argv(' \t ')).toEqual([]);
  });

  it('keeps double-quoted text as one argument', () => {
    expect(argv('python train.py --name "my run"')).toEqual([
      'python',
      'train.py',
      '--name',
      'my run',
    ]);
    // A quoted part joins the text next to it, as in a shell.
    expect(argv('--name="my  run" x"y"z')).toEqual(['--name=my  run', 'xyz']);
  });

  it('keeps single-quoted text literally', () => {
    expect(argv(`echo 'a "b" \\n $HOME'`)).toEqual(['echo', 'a "b" \\n $HOME']);
    expect(argv(`python -c 'print(1)'`)).toEqual(['python', '-c', 'print(1)']);
  });

  it('makes "" and an empty single-quoted pair empty arguments', () => {
    expect(argv(`a "" b ''`)).toEqual(['a', '', 'b', '']);
    expect(argv('""')).toEqual(['']);
  });

  it('unescapes \\" and \\\\ inside double quotes and nothing else', () => {
    expect(argv(String.raw`"say \"hi\"" "C:\\dir" "a\nb"`)).toEqual([
      'say "hi"',
      'C:\\dir',
      'a\\nb',
    ]);
  });

  it('makes the next character literal after a backslash outside quotes', () => {
    expect(argv(String.raw`my\ run \"q\" a\\b`)).toEqual(['my run', '"q"', 'a\\b']);
  });

  it('refuses an unclosed quote or a trailing backslash instead of guessing', () => {
    expect(splitCommand('python train.py --name "my run')).toEqual({
      ok: false,
      error: 'unclosedDouble',
    });
    expect(splitCommand(String.raw`echo "a\"`)).toEqual({ ok: false, error: 'unclosedDouble' });
    expect(splitCommand("echo 'it")).toEqual({ ok: false, error: 'unclosedSingle' });
    // Inside single quotes a double quote is plain text, and the other way round.
    expect(splitCommand(`echo '"' "'"`)).toEqual({ ok: true, argv: ['echo', '"', "'"] });
    expect(splitCommand('echo \\')).toEqual({ ok: false, error: 'trailingBackslash' });
  });
});

describe('parseCommand', () => {
  it('returns the argv the API accepts', () => {
    expect(parseCommand('python train.py --name "my run"')).toEqual({
      ok: true,
      argv: ['python', 'train.py', '--name', 'my run'],
    });
    expect(parseCommand('')).toEqual({ ok: true, argv: [] });
  });

  it('keeps empty and space-padded arguments, which the API takes as sent', () => {
    expect(parseCommand('a "" " b"')).toEqual({ ok: true, argv: ['a', '', ' b'] });
  });

  it('refuses what the API would refuse, naming the argument', () => {
    expect(parseCommand(`a ${'x'.repeat(1001)}`)).toEqual({
      ok: false,
      error: 'tooLong',
      arg: 2,
    });
    expect(
      parseCommand(
        Array(MAX_ARGS + 1)
          .fill('x')
          .join(' '),
      ),
    ).toEqual({
      ok: false,
      error: 'tooMany',
    });
    expect(parseCommand('"open')).toEqual({ ok: false, error: 'unclosedDouble' });
  });
});
