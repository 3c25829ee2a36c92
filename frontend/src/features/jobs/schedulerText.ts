import type { TFunction } from 'i18next';
import { formatDateTime, formatDuration } from '../../lib/format';
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
  return sayOr(message, () => new Renderer(t, language).clauses(detail));
}

/**
 * One sentence of the platform's catalogues (`{key, args}`: a job event's note, a notice's
 * title or sentence, apps/jobs/notes.py; or a scheduler's phrase) in the reader's language;
 * its arguments may be notes or the scheduler's phrases in turn, and `{seconds}` a duration.
 * What this build cannot say whole gives `message`, the English the server wrote.
 */
export function noteText(t: TFunction, language: Language, note: unknown, message: string): string {
  return sayOr(message, () => new Renderer(t, language).phrase(note));
}

/** Whole sentences (a notice's body), each a note; `message` when one cannot be said. */
export function sentencesText(
  t: TFunction,
  language: Language,
  notes: readonly unknown[],
  message: string,
): string {
  const renderer = new Renderer(t, language);
  return sayOr(message, () =>
    notes.map((n) => renderer.phrase(n)).join(SEPARATORS[language].sentence),
  );
}

function sayOr(message: string, say: () => string): string {
  try {
    return say();
  } catch (error) {
    if (error instanceof Unsayable) return message;
    throw error;
  }
}

type Catalogue = 'jobNote' | 'schedulerNote';

const SEPARATORS: Record<Language, { clause: string; list: string; sentence: string }> = {
  en: { clause: '; ', list: ', ', sentence: ' ' },
  zh: { clause: '；', list: '、', sentence: '' },
};

class Unsayable extends Error {}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The catalogue that holds `key` (the server keeps the keys of the two apart). */
function catalogueOf(key: unknown): Catalogue | null {
  if (typeof key !== 'string') return null;
  if (Object.hasOwn(en.jobNote, key)) return 'jobNote';
  if (Object.hasOwn(en.schedulerNote, key)) return 'schedulerNote';
  return null;
}

function placeholders(catalogue: Catalogue, key: string): string[] {
  const template = (en[catalogue] as Record<string, string>)[key] ?? '';
  return [...template.matchAll(/\{\{(\w+)\}\}/g)].flatMap((m) => m[1] ?? []);
}

/** A placed note's tier is one of the core's tier names, said in the reader's words. */
function isNoteTier(tier: string): tier is keyof typeof en.jobNoteTier {
  return Object.hasOwn(en.jobNoteTier, tier);
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
    if (!isRecord(value) || !isRecord(value.args)) throw new Unsayable();
    const catalogue = catalogueOf(value.key);
    if (catalogue === null) throw new Unsayable();
    const args: Record<string, string> = {};
    for (const name of placeholders(catalogue, value.key as string)) {
      if (!(name in value.args)) throw new Unsayable();
      const given = value.args[name];
      args[name] =
        catalogue === 'jobNote' && name === 'tier' && typeof given === 'string' && isNoteTier(given)
          ? this.t(`jobNoteTier.${given}`)
          : this.value(given);
    }
    // The key is checked against the catalogue above; i18next's types cannot follow it.
    const say = this.t as unknown as (key: string, args: Record<string, string>) => string;
    return say(`${catalogue}.${value.key as string}`, args);
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
      if (typeof value.seconds === 'number') return formatDuration(value.seconds, this.language);
    }
    throw new Unsayable();
  }
}
