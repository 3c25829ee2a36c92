import { Button, Space, Typography } from 'antd';
import { useTranslation } from 'react-i18next';
import type { CursorPages } from '../lib/cursorPages';

export interface CursorPagerProps {
  pages: CursorPages;
  /** The page on screen's `next` link. */
  next: string | null | undefined;
  /** While a page loads, both buttons wait. */
  busy: boolean;
  /** Prefix of the buttons' test ids: `<prefix>-newer`, `<prefix>-older`. */
  testId: string;
  size?: 'small' | 'middle';
  /** The list's order: newest first (buttons "Newer/Older") or by name ("Previous/Next"). */
  order?: 'newest' | 'name';
}

/** Buttons back and on for a list shown a page at a time, and the page's number; nothing
 * when the whole list fits on its first page. */
export function CursorPager({
  pages,
  next,
  busy,
  testId,
  size = 'middle',
  order = 'newest',
}: CursorPagerProps) {
  const { t } = useTranslation();
  const newest = order === 'newest';
  const hasOlder = next !== null && next !== undefined;
  if (pages.number === 1 && !hasOlder) return null;
  return (
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
}
