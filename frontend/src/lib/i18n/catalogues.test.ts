import { describe, expect, it } from 'vitest';
import { en } from './en';
import { zh } from './zh';

/** Every message's dotted key, e.g. `pipelineSubmit.problem.noName`. */
function keysOf(messages: object, prefix = ''): string[] {
  return Object.entries(messages).flatMap(([key, value]) =>
    value !== null && typeof value === 'object'
      ? keysOf(value as object, `${prefix}${key}.`)
      : [`${prefix}${key}`],
  );
}

/** The `{{name}}` placeholders of each message. */
function placeholders(messages: object): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  const walk = (node: object, prefix: string) => {
    for (const [key, value] of Object.entries(node)) {
      if (typeof value === 'string') {
        out[`${prefix}${key}`] = [...value.matchAll(/\{\{\s*(\w+)\s*\}\}/g)]
          .map((m) => m[1] ?? '')
          .sort();
      } else if (value !== null && typeof value === 'object') {
        walk(value as object, `${prefix}${key}.`);
      }
    }
  };
  walk(messages, '');
  return out;
}

describe('message catalogues', () => {
  it('have the same keys in English and Chinese', () => {
    expect(keysOf(zh).sort()).toEqual(keysOf(en).sort());
  });

  it('fill in the same placeholders in both languages', () => {
    expect(placeholders(zh)).toEqual(placeholders(en));
  });

  it('leave no message empty', () => {
    const empty = (messages: object) =>
      keysOf(messages).filter((key) => {
        const value = key
          .split('.')
          .reduce<unknown>((node, part) => (node as Record<string, unknown>)[part], messages);
        return typeof value !== 'string' || value.trim() === '';
      });
    expect(empty(en)).toEqual([]);
    expect(empty(zh)).toEqual([]);
  });
});
