import { Button, Space, Typography } from 'antd';
import { useTranslation } from 'react-i18next';
import type { CursorPages } from '../lib/cursorPages';

export interface CursorPagerProps {
  pages: CursorPages;
  /** The query of the page on screen: its `next` link, and whether a page is loading (both
   * buttons wait meanwhile). */
  query: { data?: { next?: string | null }; isFetching: boolean };
  /** Prefix of the buttons' test ids: `<prefix>-newer`, `<prefix>-older`. */
  testId: string;
  size?: 'small' | 'middle';
  /** The list's order: newest first (buttons "Newer/Older") or by name ("Previous/Next"). */
  order?: 'newest' | 'name';
  /** `below` a list, on its own line at the right (the default), or `inline` (a card's extra). */
  placement?: 'below' | 'inline';
}

/** Buttons back and on for a list shown a page at a time, and the page's number; nothing
 * when the whole list fits on its first page. */
export function CursorPager({
  pages,
  query,
  testId,
  size = 'middle',
  order = 'newest',
  placement = 'below',
}: CursorPagerProps) {
  const { t } = useTranslation();
  const newest = order === 'newest';
  const next = query.data?.next;
  const busy = query.isFetching;
  const hasOlder = next !== null && next !== undefined;
  if (pages.number === 1 && !hasOlder) return null;
  const buttons = (
    <Space>
      <Typography.Text type="secondary" data-testid={`${testId}-page`}>
        {t('common.pageNumber', { n: pages.number })}
      </Typography.Text>
      <Button
        size={size}
        disabled={pages.number <= 1 || busy}
        onClick={pages.back}
        data-testid={`${testId}-newer`}
      >
        {newest ? t('common.newer') : t('common.previous')}
      </Button>
      <Button
        size={size}
        disabled={!hasOlder || busy}
        onClick={() => {
          pages.forward(next);
        }}
        data-testid={`${testId}-older`}
      >
        {newest ? t('common.older') : t('common.next')}
      </Button>
    </Space>
  );
  return placement === 'inline' ? (
    buttons
  ) : (
    <div style={{ display: 'flex', justifyContent: 'flex-end', marginTop: 12 }}>{buttons}</div>
  );
}
