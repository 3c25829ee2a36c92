import type { TFunction } from 'i18next';
import { formatDateTime } from '../../lib/format';
import type { Language } from '../../lib/i18n';
import { en } from '../../lib/i18n/en';

/**
 * The scheduler's pending reason in the reader's language, from the phrases the server sends
 * beside its English (`pending_detail`; apps/scheduling/core/text.py): clauses, each a key
 * of `schedulerNote` with arguments that are values, phrases, clauses (a list), `{items}` or
 * `{time}`. Anything this build cannot say whole (a key it does not know, an argument
 * missing) gives the English message as the server wrote it, never half a sentence.
 */
export function schedulerText(
  t: TFunction,
  language: Language,
  detail: readonly unknown[] | null | undefined,
  message: string,
): string {
  if (detail === null || detail === undefined || detail.length === 0) return message;
  try {
    return new Renderer(t, language).clauses(detail);
  } catch (error) {
    if (error instanceof Unsayable) return message;
    throw error;
  }
}

type PendingNote = keyof typeof en.schedulerNote;

const SEPARATORS: Record<Language, { clause: string; list: string }> = {
  en: { clause: '; ', list: ', ' },
  zh: { clause: '；', list: '、' },
};

class Unsayable extends Error {}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isNote(key: unknown): key is PendingNote {
  return typeof key === 'string' && Object.hasOwn(en.schedulerNote, key);
}

function placeholders(key: PendingNote): string[] {
  return [...en.schedulerNote[key].matchAll(/\{\{(\w+)\}\}/g)].flatMap((m) => m[1] ?? []);
}

class Renderer {
  constructor(
    private readonly t: TFunction,
    private readonly language: Language,
  ) {}

  clauses(list: readonly unknown[]): string {
    return list.map((c) => this.phrase(c)).join(SEPARATORS[this.language].clause);
  }

  phrase(value: unknown): string {
    if (!isRecord(value) || !isNote(value.key) || !isRecord(value.args)) throw new Unsayable();
    const args: Record<string, string> = {};
    for (const name of placeholders(value.key)) {
      if (!(name in value.args)) throw new Unsayable();
      args[name] = this.value(value.args[name]);
    }
    // The key is checked against the catalogue above; i18next's types cannot follow it.
    const say = this.t as unknown as (key: string, args: Record<string, string>) => string;
    return say(`schedulerNote.${value.key}`, args);
  }

  value(value: unknown): string {
    if (typeof value === 'string' || typeof value === 'number') return String(value);
    if (Array.isArray(value)) return this.clauses(value);
    if (isRecord(value)) {
      if ('key' in value) return this.phrase(value);
      if (Array.isArray(value.items)) {
        return value.items.map((v) => this.value(v)).join(SEPARATORS[this.language].list);
      }
      if (typeof value.time === 'string') return formatDateTime(value.time, this.language);
    }
    throw new Unsayable();
  }
}
