import type { UseQueryResult } from '@tanstack/react-query';
import { Alert, Skeleton, Typography } from 'antd';
import type { ReactNode } from 'react';
import type { Pool } from '../lib/apiTypes';
import { QueryErrorResult } from './QueryErrorResult';

/** A spec file as read against the pools: what it submits, or what is wrong with it. */
export type SpecFileRead<Ok, Problem> = ({ ok: true } & Ok) | { ok: false; problems: Problem[] };

interface Props<Ok, Problem> {
  pools: UseQueryResult<Pool[]>;
  /** The file read, or none while there is no text (or no pools yet to read it against). */
  file: SpecFileRead<Ok, Problem> | undefined;
  emptyText: string;
  emptyTestId: string;
  problemsTitle: string;
  problemsTestId: string;
  problemText: (problem: Problem) => string;
  /** The preview of a file with no problems. */
  children: (file: Ok, pools: Pool[]) => ReactNode;
}

/**
 * What a spec file would submit: loading while the pools load, their error, a line while
 * there is no file, the file's problems, or else `children`.
 */
export function SpecFilePreview<Ok, Problem>({
  pools,
  file,
  emptyText,
  emptyTestId,
  problemsTitle,
  problemsTestId,
  problemText,
  children,
}: Props<Ok, Problem>) {
  if (pools.isPending) return <Skeleton active paragraph={{ rows: 3 }} />;
  if (pools.isError) {
    return <QueryErrorResult error={pools.error} onRetry={() => void pools.refetch()} />;
  }
  if (file === undefined) {
    return (
      <Typography.Text type="secondary" data-testid={emptyTestId}>
        {emptyText}
      </Typography.Text>
    );
  }
  if (!file.ok) {
    return (
      <Alert
        type="error"
        showIcon
        title={problemsTitle}
        description={
          <ul style={{ margin: 0, paddingLeft: 20 }} data-testid={problemsTestId}>
            {file.problems.map((problem, i) => (
              <li key={i}>{problemText(problem)}</li>
            ))}
          </ul>
        }
      />
    );
  }
  return children(file, pools.data);
}
