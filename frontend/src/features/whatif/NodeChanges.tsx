import { Form, InputNumber } from 'antd';
import { useTranslation } from 'react-i18next';
import { ChangeRows, PoolItem } from './ChangeRows';

/** The form's pools to grow or shrink: the capacity question. */
export function NodeChangeRows() {
  const { t } = useTranslation();
  return (
    <ChangeRows
      name="node_changes"
      addLabel={t('whatif.addChange')}
      removeLabel={t('whatif.removeChange')}
      initial={{ nodes: 4 }}
    >
      {(field) => (
        <>
          <PoolItem field={field} label={t('whatif.pool')} />
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
