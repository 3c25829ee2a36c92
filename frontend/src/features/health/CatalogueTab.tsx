import type { UseMutationResult } from '@tanstack/react-query';
import { App, Empty, Space, Switch, Typography } from 'antd';
import type { ColumnsType } from 'antd/es/table';
import { useState, type ReactNode } from 'react';
import { useTranslation } from 'react-i18next';
import { CreateButton } from '../../components/CreateButton';
import { EditDeleteButtons } from '../../components/EditDeleteButtons';
import { QueryTable, type TableQuery } from '../../components/QueryTable';
import type { ApiError } from '../../lib/api';

interface Row {
  id: number;
  enabled?: boolean;
}

export interface RowTexts {
  enabledLabel: string;
  edit: string;
  deleteLabel: string;
  deleteConfirm: string;
  deleted: string;
}

interface Props<V extends { id?: number }, T extends V & Row> {
  /** The i18n section of the catalogue: its texts share key names (hint, new, enabled, ...). */
  ns: 'healthRules' | 'healthReceivers';
  testId: string;
  query: TableQuery & { data: T[] | undefined };
  /** The catalogue's own columns; the enabled switch and the row actions are added here. */
  columns: ColumnsType<T>;
  /** The texts that name a row ("Edit xid:79"); typed per catalogue, so they stay here. */
  rowTexts: (row: T) => RowTexts;
  /** Saves a row with its switch flipped (the variables carry the row's id). */
  save: UseMutationResult<T, ApiError, V>;
  remove: UseMutationResult<unknown, ApiError, number>;
  /** The create (row null) or edit form. */
  modal: (row: T | null, onClose: () => void) => ReactNode;
}

/**
 * A catalogue an operator edits by hand (fault rules, alert receivers): a hint and a create
 * button above a table whose rows switch on and off in place and are edited in a form or
 * deleted after a question.
 */
export function CatalogueTab<V extends { id?: number }, T extends V & Row>({
  ns,
  testId,
  query,
  columns,
  rowTexts,
  save,
  remove,
  modal,
}: Props<V, T>) {
  const { t } = useTranslation();
  const { message } = App.useApp();
  const [editing, setEditing] = useState<T | 'new' | null>(null);
  const busyId = save.isPending ? save.variables.id : undefined;
  return (
    <Space orientation="vertical" size={12} style={{ width: '100%' }}>
      <Space style={{ width: '100%', justifyContent: 'space-between' }}>
        <Typography.Text type="secondary">{t(`${ns}.hint`)}</Typography.Text>
        <CreateButton
          label={t(`${ns}.new`)}
          onClick={() => {
            setEditing('new');
          }}
        />
      </Space>
      <QueryTable<T>
        rowKey="id"
        size="small"
        data-testid={testId}
        query={query}
        rows={query.data ?? []}
        pagination={false}
        locale={{ emptyText: <Empty description={t(`${ns}.empty`)} /> }}
        columns={[
          ...columns,
          {
            title: t(`${ns}.enabled`),
            dataIndex: 'enabled',
            render: (enabled: boolean, row) => (
              <Switch
                size="small"
                checked={enabled}
                loading={busyId === row.id}
                aria-label={rowTexts(row).enabledLabel}
                onChange={(on) => {
                  save.mutate(
                    { ...row, enabled: on },
                    { onError: (error) => void message.error(error.summary) },
                  );
                }}
              />
            ),
          },
          {
            title: '',
            key: 'edit',
            render: (_, row) => (
              <EditDeleteButtons
                editLabel={rowTexts(row).edit}
                deleteLabel={rowTexts(row).deleteLabel}
                confirm={rowTexts(row).deleteConfirm}
                deleteText={t(`${ns}.delete`)}
                onEdit={() => {
                  setEditing(row);
                }}
                onDelete={() => {
                  remove.mutate(row.id, {
                    onSuccess: () => void message.success(rowTexts(row).deleted),
                    onError: (error) => void message.error(error.summary),
                  });
                }}
              />
            ),
          },
        ]}
      />
      {editing !== null &&
        modal(editing === 'new' ? null : editing, () => {
          setEditing(null);
        })}
    </Space>
  );
}
