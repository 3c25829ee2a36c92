import { MinusCircleOutlined, PlusOutlined } from '@ant-design/icons';
import { Button, Form, Select, Space, type FormListFieldData } from 'antd';
import type { ReactNode } from 'react';
import { useTranslation } from 'react-i18next';
import { usePools } from '../jobs/api';

interface Props {
  /** The form's list field. */
  name: string;
  addLabel: string;
  removeLabel: string;
  /** A new row's values. */
  initial: Record<string, unknown>;
  /** The row's own fields. */
  children: (field: FormListFieldData) => ReactNode;
}

/** A list of changes in the What-if form: a row per change, each removable, and a button to
 * add one. */
export function ChangeRows({ name, addLabel, removeLabel, initial, children }: Props) {
  return (
    <Form.List name={name}>
      {(fields, { add, remove }) => (
        <div style={{ width: '100%', marginTop: 8 }}>
          {fields.map((field) => (
            <Space key={field.key} align="baseline" wrap>
              {children(field)}
              <Button
                type="text"
                icon={<MinusCircleOutlined />}
                aria-label={removeLabel}
                onClick={() => {
                  remove(field.name);
                }}
              />
            </Space>
          ))}
          <Button
            type="dashed"
            icon={<PlusOutlined />}
            onClick={() => {
              add(initial);
            }}
          >
            {addLabel}
          </Button>
        </div>
      )}
    </Form.List>
  );
}

/** A row's pool, picked by cluster/pool name. */
export function PoolItem({ field, label }: { field: FormListFieldData; label: string }) {
  const { t } = useTranslation();
  const pools = usePools();
  return (
    <Form.Item
      label={label}
      name={[field.name, 'pool']}
      rules={[{ required: true, message: t('whatif.pickPool') }]}
    >
      <Select
        style={{ width: 200 }}
        loading={pools.isLoading}
        aria-label={label}
        options={(pools.data ?? []).map((p) => ({ value: p.id, label: `${p.cluster}/${p.name}` }))}
      />
    </Form.Item>
  );
}
