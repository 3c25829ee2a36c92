import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, ApiError, unwrap } from '../../lib/api';
import type { LoginBody, Session } from '../../lib/apiTypes';
import { SESSION_QUERY_KEY } from '../../lib/queryClient';

/** The signed-in user, or null when nobody is signed in. Also primes the CSRF cookie. */
async function fetchSession(signal: AbortSignal): Promise<Session | null> {
  try {
    return await unwrap(api.GET('/api/v1/auth/session/', { signal }));
  } catch (error) {
    if (error instanceof ApiError && error.isAuthError) {
      return null;
    }
    throw error;
  }
}

export function useSession() {
  return useQuery({
    queryKey: SESSION_QUERY_KEY,
    queryFn: ({ signal }) => fetchSession(signal),
    staleTime: 5 * 60_000,
  });
}

/** The ISO 4217 code prices and costs are in (the server's ZS_CURRENCY). */
export function useCurrency(): string {
  return useSession().data?.currency ?? 'CNY';
}

export function useLogin() {
  const queryClient = useQueryClient();
  return useMutation<Session, ApiError, LoginBody>({
    mutationFn: (body) => unwrap(api.POST('/api/v1/auth/login/', { body })),
    onSuccess: (session) => {
      // Data cached for a previous user must not leak into this session.
      queryClient.removeQueries({ predicate: (q) => q.queryKey[0] !== SESSION_QUERY_KEY[0] });
      queryClient.setQueryData(SESSION_QUERY_KEY, session);
    },
  });
}

export function useLogout() {
  const queryClient = useQueryClient();
  return useMutation<undefined, ApiError>({
    mutationFn: async () => {
      await unwrap(api.POST('/api/v1/auth/logout/'));
      return undefined;
    },
    onSettled: () => {
      // Even if the server call failed, forget everything we knew about this user.
      queryClient.removeQueries({ predicate: (q) => q.queryKey[0] !== SESSION_QUERY_KEY[0] });
      queryClient.setQueryData(SESSION_QUERY_KEY, null);
    },
  });
}
