import { QueryCache, QueryClient } from '@tanstack/react-query';
import { ApiError } from './api';

export const SESSION_QUERY_KEY = ['session'] as const;

function shouldRetry(failureCount: number, error: unknown): boolean {
  // 4xx will not change by asking again; network errors and 5xx get two more tries.
  if (error instanceof ApiError && error.status >= 400 && error.status < 500) {
    return false;
  }
  return failureCount < 2;
}

export function createQueryClient(): QueryClient {
  const client: QueryClient = new QueryClient({
    queryCache: new QueryCache({
      onError: (error, query) => {
        // A data query denied for lack of a session: ask the session endpoint again. If the
        // session is gone, the route guard sends the user to /login; a plain permission
        // error leaves the session as it is.
        if (
          error instanceof ApiError &&
          error.isAuthError &&
          query.queryKey[0] !== SESSION_QUERY_KEY[0]
        ) {
          void client.invalidateQueries({ queryKey: SESSION_QUERY_KEY });
        }
      },
    }),
    defaultOptions: {
      queries: { staleTime: 15_000, retry: shouldRetry },
      mutations: { retry: false },
    },
  });
  return client;
}
