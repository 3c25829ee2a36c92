import { vi } from 'vitest';

/** A canned answer for one `METHOD /path/`. */
export interface StubResponse {
  status: number;
  body?: unknown;
  setCookie?: string;
  /** Answer only once this settles: a request still in flight while the test looks. */
  gate?: Promise<unknown>;
}

export interface RecordedRequest {
  method: string;
  path: string;
  /** The query string, without '?'. */
  query: string;
  headers: Headers;
  body: unknown;
}

/**
 * What the console's frame asks on every page (the header's count of unread notices): answered
 * as "none" unless a test routes it itself, so each page's test lists only its own requests.
 */
const FRAME_DEFAULTS: [RegExp, StubResponse][] = [
  // The login page asks how one may sign in; passwords only unless a test says otherwise.
  [/^GET \/api\/v1\/auth\/providers\/$/, { status: 200, body: { sso: null } }],
  [
    /^GET \/api\/v1\/tenants\/[^/]+\/governance\/notifications\/unread-count\/$/,
    { status: 200, body: { marked: 0, unread: 0 } },
  ],
];

/** The requests a page made itself, without the console frame's (FRAME_DEFAULTS). */
export function pageRequests(requests: RecordedRequest[]): RecordedRequest[] {
  return requests.filter(
    (r) => !FRAME_DEFAULTS.some(([pattern]) => pattern.test(`${r.method} ${r.path}`)),
  );
}

/**
 * Replaces global fetch (the network boundary) with a table of answers keyed by
 * "METHOD /path/". Unknown requests fail the test loudly. Returns the recorded requests.
 */
export function stubFetch(routes: Record<string, StubResponse | StubResponse[]>) {
  const requests: RecordedRequest[] = [];
  const queues = new Map(
    Object.entries(routes).map(([key, value]) => [
      key,
      Array.isArray(value) ? [...value] : [value],
    ]),
  );

  const fetchStub = vi.fn(async (input: RequestInfo | URL, init?: RequestInit) => {
    const request = input instanceof Request ? input : new Request(input, init);
    const url = new URL(request.url);
    const text = request.method === 'GET' ? '' : await request.text();
    requests.push({
      method: request.method,
      path: url.pathname,
      query: url.search.replace(/^\?/, ''),
      headers: request.headers,
      body: text ? (JSON.parse(text) as unknown) : undefined,
    });
    const key = `${request.method} ${url.pathname}`;
    const fallback = FRAME_DEFAULTS.find(([pattern]) => pattern.test(key));
    const queue = queues.get(key) ?? (fallback ? [fallback[1]] : undefined);
    if (queue === undefined || queue.length === 0) {
      throw new Error(`unexpected request in test: ${key}`);
    }
    // The last answer repeats (refetches); earlier ones are used once each, in order.
    const answer = queue.length > 1 ? queue.shift() : queue[0];
    if (answer === undefined) {
      throw new Error(`no answer for ${key}`);
    }
    if (answer.gate !== undefined) {
      await answer.gate;
    }
    if (answer.setCookie !== undefined) {
      document.cookie = answer.setCookie;
    }
    return new Response(answer.body === undefined ? null : JSON.stringify(answer.body), {
      status: answer.status,
      headers: answer.body === undefined ? {} : { 'Content-Type': 'application/json' },
    });
  });
  vi.stubGlobal('fetch', fetchStub);
  return { requests, fetchStub };
}
