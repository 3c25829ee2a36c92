import { describe, expect, it } from 'vitest';
import { stubFetch } from '../test/fetchStub';
import { api, ApiError, flattenErrors, unwrap } from './api';

describe('api client', () => {
  it('fetches the CSRF cookie first when an unsafe request has none', async () => {
    const { requests } = stubFetch({
      'GET /api/v1/auth/session/': {
        status: 403,
        body: { detail: 'no' },
        setCookie: 'csrftoken=fresh; path=/',
      },
      'POST /api/v1/auth/logout/': { status: 204 },
    });

    await unwrap(api.POST('/api/v1/auth/logout/'));

    expect(requests.map((r) => `${r.method} ${r.path}`)).toEqual([
      'GET /api/v1/auth/session/',
      'POST /api/v1/auth/logout/',
    ]);
    expect(requests[1]?.headers.get('X-CSRFToken')).toBe('fresh');
  });

  it('sends no CSRF header on GET', async () => {
    document.cookie = 'csrftoken=tok; path=/';
    const { requests } = stubFetch({
      'GET /api/v1/overview/': { status: 200, body: { tenants: 0 } },
    });

    await unwrap(api.GET('/api/v1/overview/'));

    expect(requests[0]?.headers.get('X-CSRFToken')).toBeNull();
  });

  it('turns an error body into ApiError with detail and field errors', async () => {
    stubFetch({
      'POST /api/v1/auth/login/': {
        status: 400,
        body: { detail: 'Invalid input.', errors: { password: ['Wrong.'] } },
      },
    });
    document.cookie = 'csrftoken=tok; path=/';

    const error = await unwrap(
      api.POST('/api/v1/auth/login/', { body: { username: 'a', password: 'b' } }),
    ).catch((e: unknown) => e);

    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({
      status: 400,
      detail: 'Invalid input.',
      errors: { password: ['Wrong.'] },
    });
    // One line for a toast: the field messages, not the bare "Invalid input.".
    expect((error as ApiError).summary).toBe('Wrong.');
    expect(new ApiError(409, { detail: 'Not running.' }, 'fallback').summary).toBe('Not running.');
  });

  it('puts nested field errors under dotted keys', () => {
    const error = new ApiError(
      400,
      {
        detail: 'Invalid input.',
        errors: {
          hours: ['Too long.'],
          node_changes: { '1': { nodes: ['Too many.'], pool: ['Gone.'] } },
          replicas: [{}, { name: ['Blank.'] }],
          policies: 'One only.',
        },
      },
      'fallback',
    );
    expect(error.errors).toEqual({
      hours: ['Too long.'],
      'node_changes.1.nodes': ['Too many.'],
      'node_changes.1.pool': ['Gone.'],
      'replicas.1.name': ['Blank.'],
      policies: ['One only.'],
    });
    expect(flattenErrors(['Each pool at most once.'], 'node_changes')).toEqual({
      node_changes: ['Each pool at most once.'],
    });
  });

  it('reports an unreachable server as status 0', async () => {
    stubFetch({});

    const error = await unwrap(api.GET('/api/v1/overview/')).catch((e: unknown) => e);

    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).status).toBe(0);
  });
});
