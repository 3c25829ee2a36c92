import { StyleProvider } from '@ant-design/cssinjs';
import { QueryClient, QueryClientProvider, useQuery } from '@tanstack/react-query';
import { fireEvent, render, screen, within } from '@testing-library/react';
import { describe, expect, it, vi } from 'vitest';
import { QueryTable } from './QueryTable';

interface Row {
  id: number;
  name: string;
}

function RowsTable({ fetchRows }: { fetchRows: () => Promise<Row[]> }) {
  const query = useQuery({ queryKey: ['rows'], queryFn: fetchRows });
  return (
    <QueryTable<Row>
      query={query}
      rows={query.data ?? []}
      rowKey="id"
      data-testid="rows-table"
      pagination={false}
      columns={[{ title: 'Name', dataIndex: 'name' }]}
    />
  );
}

function renderTable(fetchRows: () => Promise<Row[]>) {
  // No retries: a failed fetch must show the error state at once.
  const queryClient = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  return render(
    // Styles go to a detached element, as in renderApp: keeps jsdom style lookups fast.
    <StyleProvider container={document.createElement('div')}>
      <QueryClientProvider client={queryClient}>
        <RowsTable fetchRows={fetchRows} />
      </QueryClientProvider>
    </StyleProvider>,
  );
}

describe('QueryTable', () => {
  it('renders the rows with the props passed through', async () => {
    renderTable(() =>
      Promise.resolve([
        { id: 1, name: 'gpu-a' },
        { id: 2, name: 'gpu-b' },
      ]),
    );
    const table = await screen.findByTestId('rows-table');
    expect(await within(table).findByText('gpu-a')).toBeTruthy();
    expect(within(table).getByText('gpu-b')).toBeTruthy();
    expect(within(table).getByText('Name')).toBeTruthy();
    expect(table.closest('[aria-busy="true"]')).toBeNull();
    expect(screen.queryByRole('alert')).toBeNull();
  });

  it('shows the table as loading while the query has no data', () => {
    renderTable(() => new Promise<Row[]>(() => undefined));
    const table = screen.getByTestId('rows-table');
    // antd puts data-testid on the table inside its loading Spin, which carries aria-busy.
    expect(table.closest('[aria-busy="true"]')).not.toBeNull();
    expect(within(table).queryByText('gpu-a')).toBeNull();
  });

  it('shows the error with a retry that refetches the query', async () => {
    const fetchRows = vi
      .fn<() => Promise<Row[]>>()
      .mockRejectedValueOnce(new Error('offline'))
      .mockResolvedValueOnce([{ id: 1, name: 'gpu-a' }]);
    renderTable(fetchRows);

    const alert = await screen.findByRole('alert');
    expect(within(alert).getByText('Could not load data')).toBeTruthy();
    expect(screen.queryByTestId('rows-table')).toBeNull();

    fireEvent.click(within(alert).getByRole('button', { name: 'Retry' }));
    expect(await screen.findByText('gpu-a')).toBeTruthy();
    expect(fetchRows).toHaveBeenCalledTimes(2);
    expect(screen.queryByRole('alert')).toBeNull();
  });
});
