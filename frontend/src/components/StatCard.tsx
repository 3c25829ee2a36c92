import { Card, Skeleton } from 'antd';
import type { ReactNode } from 'react';
import styles from './StatCard.module.css';

interface Props {
  /** Stable id for tests and end-to-end checks: renders data-testid="stat-<id>". */
  id: string;
  label: string;
  /** Raw value (also exposed as data-value), shown as `formatted`. */
  value: number | undefined;
  formatted: string | undefined;
  icon: ReactNode;
  accent: string;
  footnote?: ReactNode;
  loading?: boolean;
}

/** One headline number on a dashboard. */
export function StatCard({ id, label, value, formatted, icon, accent, footnote, loading }: Props) {
  return (
    <Card className={styles.card} styles={{ body: { padding: 20 } }}>
      <div className={styles.top}>
        <span className={styles.label}>{label}</span>
        <span className={styles.icon} style={{ color: accent, background: `${accent}14` }}>
          {icon}
        </span>
      </div>
      {loading || value === undefined ? (
        <Skeleton.Input active size="small" className={styles.skeleton} />
      ) : (
        <div className={styles.value} data-testid={`stat-${id}`} data-value={value}>
          {formatted}
        </div>
      )}
      <div className={styles.footnote}>{footnote ?? '\u00a0'}</div>
    </Card>
  );
}
