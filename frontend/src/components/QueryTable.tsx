import type { UseQueryResult } from '@tanstack/react-query';
import { Table, type TableProps } from 'antd';
import { QueryErrorResult } from './QueryErrorResult';

/** The parts of a query that QueryTable reads; any useQuery result fits. */
export type TableQuery = Pick<
  UseQueryResult<unknown, unknown>,
  'isError' | 'error' | 'isPending' | 'refetch'
>;

export type QueryTableProps<T extends object> = Omit<TableProps<T>, 'dataSource' | 'loading'> & {
  query: TableQuery;
  rows: readonly T[];
};

/**
 * A table of rows loaded by `query`: its error state with a retry button when the query
 * failed, else the table, loading while the query has no data yet. Every other prop goes
 * to antd's Table as is.
 */
export function QueryTable<T extends object>({ query, rows, ...tableProps }: QueryTableProps<T>) {
  // `error` is read only on failure: TanStack re-renders only for the fields a render read.
  if (query.isError) {
    return <QueryErrorResult error={query.error} onRetry={() => void query.refetch()} />;
  }
  return <Table<T> {...tableProps} loading={query.isPending} dataSource={rows} />;
}
