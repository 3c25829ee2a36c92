import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect } from 'react';
import { api, ApiError, unwrap } from '../../lib/api';
import type {
  LoginBody,
  PasswordChangeBody,
  Profile,
  ProfileBody,
  Session,
} from '../../lib/apiTypes';
import { currentLanguage, hasStoredLanguage, isLanguage, setLanguage } from '../../lib/i18n';
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

/** Change the signed-in user's name, email address or language; the session follows. */
export function useSaveProfile() {
  const queryClient = useQueryClient();
  return useMutation<Profile, ApiError, ProfileBody>({
    mutationFn: (body) => unwrap(api.PATCH('/api/v1/auth/profile/', { body })),
    onSuccess: (profile) => {
      queryClient.setQueryData<Session | null>(SESSION_QUERY_KEY, (session) =>
        session
          ? {
              ...session,
              user: {
                ...session.user,
                display_name: profile.display_name ?? session.user.display_name,
                email: profile.email ?? session.user.email,
                language: profile.language ?? session.user.language,
              },
            }
          : session,
      );
    },
  });
}

export function useChangePassword() {
  return useMutation<undefined, ApiError, PasswordChangeBody>({
    mutationFn: async (body) => {
      await unwrap(api.POST('/api/v1/auth/password/', { body }));
      return undefined;
    },
  });
}

/**
 * The signed-in user's language and this browser's, made one: a browser with no choice of its
 * own takes the user's (a new laptop opens in their language), and a user with none on the
 * server takes the browser's, so notices emailed to them are in the language they read.
 */
export function useLanguageSync(session: Session | null | undefined): void {
  const save = useSaveProfile();
  const saved = session?.user.language;
  const signedIn = session !== null && session !== undefined;
  const { mutate } = save;
  useEffect(() => {
    if (!signedIn) return;
    if (isLanguage(saved)) {
      if (!hasStoredLanguage() && saved !== currentLanguage()) void setLanguage(saved);
    } else if (hasStoredLanguage()) {
      mutate({ language: currentLanguage() });
    }
  }, [signedIn, saved, mutate]);
}
