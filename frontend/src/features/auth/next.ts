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
