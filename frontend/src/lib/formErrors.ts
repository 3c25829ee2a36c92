import type { FormInstance } from 'antd';
import { ApiError } from './api';

/**
 * Puts the server's field errors (`{"errors": {field: [..]}}`) on the form's fields. Errors for
 * fields the form does not have (or `non_field_errors`) are returned for a form-level alert.
 * Nested keys such as `replica_groups.0.accelerators` are mapped to antd name paths.
 */
export function applyServerErrors(
  form: FormInstance,
  error: unknown,
  known: (string | number)[][],
): { unmatched: string[]; fields: (string | number)[][] } {
  if (!(error instanceof ApiError)) {
    return { unmatched: [error instanceof Error ? error.message : String(error)], fields: [] };
  }
  const unmatched: string[] = [];
  const fields: (string | number)[][] = [];
  const entries = Object.entries(error.errors);
  for (const [key, messages] of entries) {
    const path = key.split('.').map((part) => (/^\d+$/.test(part) ? Number(part) : part));
    const match = known.find(
      (name) => name.length === path.length && name.every((p, i) => p === path[i]),
    );
    if (match) {
      fields.push(match);
      form.setFields([{ name: match, errors: messages }]);
    } else {
      unmatched.push(...messages.map((m) => (key === 'non_field_errors' ? m : `${key}: ${m}`)));
    }
  }
  if (entries.length === 0) unmatched.push(error.detail);
  return { unmatched, fields };
}

/** `applyServerErrors`, with what no field can show said in a message (antd's `message`). */
export function reportServerErrors(
  form: FormInstance,
  error: unknown,
  known: (string | number)[][],
  message: { error: (text: string) => unknown },
): void {
  const { unmatched } = applyServerErrors(form, error, known);
  if (unmatched.length > 0) void message.error(unmatched.join(' '));
}
