import { Form, InputNumber, Select } from 'antd';
import { useTranslation } from 'react-i18next';
import { usePools } from '../jobs/api';
import { ChangeRows } from './ChangeRows';

/** The form's pools to grow or shrink: the capacity question. */
export function NodeChangeRows() {
  const { t } = useTranslation();
  const pools = usePools();
  return (
    <ChangeRows
      name="node_changes"
      addLabel={t('whatif.addChange')}
      removeLabel={t('whatif.removeChange')}
      initial={{ nodes: 4 }}
    >
      {(field) => (
        <>
          <Form.Item
            label={t('whatif.pool')}
            name={[field.name, 'pool']}
            rules={[{ required: true, message: t('whatif.pickPool') }]}
          >
            <Select
              style={{ width: 220 }}
              loading={pools.isLoading}
              aria-label={t('whatif.pool')}
              options={(pools.data ?? []).map((p) => ({
                value: p.id,
                label: `${p.cluster}/${p.name}`,
              }))}
            />
          </Form.Item>
          <Form.Item
            label={t('whatif.nodeChange')}
            name={[field.name, 'nodes']}
            tooltip={t('whatif.nodeChangeHint')}
            rules={[
              { required: true, message: t('whatif.nodeChangeNeeded') },
              {
                validator: (_, v: number | null) =>
                  v === 0
                    ? Promise.reject(new Error(t('whatif.nodeChangeNeeded')))
                    : Promise.resolve(),
              },
            ]}
          >
            <InputNumber
              min={-10000}
              max={10000}
              precision={0}
              style={{ width: 110 }}
              aria-label={t('whatif.nodeChange')}
            />
          </Form.Item>
        </>
      )}
    </ChangeRows>
  );
}
