/** Where to go after login: only a path on this site, never another origin (open redirect). */
export function safeNextPath(next: string | null): string {
  if (next === null || !next.startsWith('/') || next.startsWith('//') || next.startsWith('/\\')) {
    return '/';
  }
  if (next === '/login' || next.startsWith('/login?') || next.startsWith('/login/')) {
    return '/';
  }
  return next;
}

export function loginPathFor(location: { pathname: string; search: string; hash: string }): string {
  const target = `${location.pathname}${location.search}${location.hash}`;
  return target === '/' ? '/login?next=%2F' : `/login?next=${encodeURIComponent(target)}`;
}

/** Paths the server answers itself (a notebook through the platform's proxy), so leaving the
 * login page for them needs a full page load rather than a client-side route change. */
export function isServerPath(path: string): boolean {
  return /^\/notebooks\/\d+(\/|$)/.test(path);
}
