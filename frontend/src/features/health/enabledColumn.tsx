import { Switch } from 'antd';
import type { ColumnType } from 'antd/es/table';

/**
 * A catalogue table's "enabled" column: a switch per row that saves at once. `busyId` is the
 * row being saved (its switch spins), `label` names the switch after its row.
 */
export function enabledColumn<T extends { id: number; enabled?: boolean }>(
  title: string,
  label: (row: T) => string,
  onToggle: (row: T, on: boolean) => void,
  busyId: number | undefined,
): ColumnType<T> {
  return {
    title,
    dataIndex: 'enabled',
    render: (enabled: boolean, row) => (
      <Switch
        size="small"
        checked={enabled}
        loading={busyId === row.id}
        aria-label={label(row)}
        onChange={(on) => {
          onToggle(row, on);
        }}
      />
    ),
  };
}
