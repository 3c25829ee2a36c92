import { useState } from 'react';

/** The cursor in a DRF cursor-paginated `next`/`previous` link; undefined when there is none. */
export function cursorOf(link: string | null | undefined): string | undefined {
  if (link === null || link === undefined) return undefined;
  return new URL(link, window.location.origin).searchParams.get('cursor') ?? undefined;
}

export interface CursorPages {
  /** The cursor of the page on screen; undefined for the first page, so that it can go into
   * a query as it is (the API client leaves out undefined parameters). */
  cursor: string | undefined;
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
  const [walk, setWalk] = useState<{ scope: string; cursors: (string | undefined)[] }>({
    scope,
    cursors: [undefined],
  });
  const cursors = walk.scope === scope ? walk.cursors : [undefined];
  return {
    cursor: cursors[cursors.length - 1],
    number: cursors.length,
    back: () => {
      setWalk({ scope, cursors: cursors.length > 1 ? cursors.slice(0, -1) : cursors });
    },
    forward: (next) => {
      const cursor = cursorOf(next);
      if (cursor !== undefined) setWalk({ scope, cursors: [...cursors, cursor] });
    },
  };
}
