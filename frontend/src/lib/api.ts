import createClient, { type Middleware } from 'openapi-fetch';
import type { paths } from '../api/schema';
import { CSRF_COOKIE, CSRF_HEADER, isUnsafeMethod, readCookie } from './csrf';

/**
 * The API's error body: `{"detail": str, "errors"?: {field: [messages]}}`. A list of nested
 * objects nests its errors: `{"node_changes": {"0": {"nodes": [messages]}}}`.
 */
export interface ApiErrorBody {
  detail?: string;
  errors?: Record<string, unknown>;
}

/** Nested field errors under dotted keys (`node_changes.0.nodes`), the shape forms map to
 * field paths; messages with no field of their own stay under their parent's key. */
export function flattenErrors(errors: unknown, prefix = ''): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  const under = (key: string | number) => (prefix ? `${prefix}.${key}` : String(key));
  if (Array.isArray(errors)) {
    const messages = errors.filter((e): e is string => typeof e === 'string');
    if (messages.length) out[prefix || 'non_field_errors'] = messages;
    errors.forEach((e, i) => {
      if (e !== null && typeof e === 'object') Object.assign(out, flattenErrors(e, under(i)));
    });
  } else if (errors !== null && typeof errors === 'object') {
    for (const [key, value] of Object.entries(errors)) {
      Object.assign(out, flattenErrors(value, under(key)));
    }
  } else if (typeof errors === 'string') {
    out[prefix || 'non_field_errors'] = [errors];
  }
  return out;
}

/** A failed API call. `status` is 0 when the server could not be reached at all. */
export class ApiError extends Error {
  readonly status: number;
  readonly detail: string;
  readonly errors: Record<string, string[]>;

  constructor(status: number, body: ApiErrorBody | undefined, fallback: string) {
    const detail = typeof body?.detail === 'string' ? body.detail : fallback;
    super(detail);
    this.name = 'ApiError';
    this.status = status;
    this.detail = detail;
    this.errors = flattenErrors(body?.errors ?? {});
  }

  /** What to tell the user in one line: the field messages when there are any (a 400's
   * detail is only "Invalid input."), else the detail. */
  get summary(): string {
    const messages = Object.values(this.errors).flat();
    return messages.length > 0 ? messages.join(' ') : this.detail;
  }

  /** Not logged in (DRF answers 401 or 403 depending on the authentication class). */
  get isAuthError(): boolean {
    return this.status === 401 || this.status === 403;
  }
}

const SESSION_PATH = '/api/v1/auth/session/';

function origin(): string {
  // Absolute URLs: Request() outside a browser (tests) cannot resolve relative ones.
  return window.location.origin;
}

/**
 * Unsafe requests need the CSRF cookie. The session endpoint hands it out; if a page sends a
 * POST before anything fetched the session (a fresh login page), get the cookie first.
 */
const csrfMiddleware: Middleware = {
  async onRequest({ request }) {
    if (!isUnsafeMethod(request.method)) {
      return undefined;
    }
    let token = readCookie(CSRF_COOKIE);
    if (token === null) {
      await globalThis.fetch(new URL(SESSION_PATH, origin()), { credentials: 'same-origin' });
      token = readCookie(CSRF_COOKIE);
    }
    if (token !== null) {
      request.headers.set(CSRF_HEADER, token);
    }
    return request;
  },
};

export const api = createClient<paths>({
  baseUrl: origin(),
  credentials: 'same-origin',
  headers: { Accept: 'application/json' },
  // Look fetch up per call, so tests can stub it at the network boundary.
  fetch: (request: Request) => globalThis.fetch(request),
});
api.use(csrfMiddleware);

interface FetchResult<T> {
  data?: T;
  error?: unknown;
  response: Response;
}

/**
 * Runs an openapi-fetch call and returns its data, or throws ApiError.
 * Network failures become status 0 so the UI can tell "offline" from "server said no".
 */
export async function unwrap<T>(call: Promise<FetchResult<T>>): Promise<T> {
  let result: FetchResult<T>;
  try {
    result = await call;
  } catch (error) {
    if (error instanceof DOMException && error.name === 'AbortError') {
      throw error;
    }
    throw new ApiError(0, undefined, error instanceof Error ? error.message : String(error));
  }
  const { data, error, response } = result;
  if (!response.ok) {
    const body = typeof error === 'object' && error !== null ? (error as ApiErrorBody) : undefined;
    throw new ApiError(response.status, body, response.statusText || `HTTP ${response.status}`);
  }
  return data as T;
}
