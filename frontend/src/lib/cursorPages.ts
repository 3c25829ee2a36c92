import { useState } from 'react';

/** The cursor in a DRF cursor-paginated `next`/`previous` link; null when there is none. */
export function cursorOf(link: string | null | undefined): string | null {
  if (link === null || link === undefined) return null;
  return new URL(link, window.location.origin).searchParams.get('cursor');
}

export interface CursorPages {
  /** The cursor of the page on screen; null for the first (newest) page. */
  cursor: string | null;
  /** 1 for the first page. */
  number: number;
  /** Back one page, to the exact page seen before. */
  back: () => void;
  /** On to the page a `next` link names. */
  forward: (next: string | null | undefined) => void;
}

/**
 * Walks a cursor-paginated list a page at a time. The cursors walked so far are kept, so
 * going back returns to the exact page seen (a `previous` link would be taken against rows
 * inserted since). A new `scope` (other filters) starts again at the first page.
 */
export function useCursorPages(scope: string): CursorPages {
  const [walk, setWalk] = useState<{ scope: string; cursors: (string | null)[] }>({
    scope,
    cursors: [null],
  });
  const cursors = walk.scope === scope ? walk.cursors : [null];
  return {
    cursor: cursors[cursors.length - 1] ?? null,
    number: cursors.length,
    back: () => {
      setWalk({ scope, cursors: cursors.length > 1 ? cursors.slice(0, -1) : cursors });
    },
    forward: (next) => {
      const cursor = cursorOf(next);
      if (cursor !== null) setWalk({ scope, cursors: [...cursors, cursor] });
    },
  };
}
