import { Form, InputNumber, Select, type FormInstance } from 'antd';
import { useTranslation } from 'react-i18next';
import { useAllQuotas } from '../quotas/api';
import { ChangeRows } from './ChangeRows';
import { quotaKey } from './whatIfQuotas';

/** The form's quotas to replay with other values (a row per quota), each starting from
 * its current guarantee and borrowing limit. */
export function QuotaChangeRows({ form }: { form: FormInstance }) {
  const { t } = useTranslation();
  const quotas = useAllQuotas(true);
  const list = quotas.data ?? [];
  const count = (label: string) => (
    <InputNumber min={0} precision={0} style={{ width: 100 }} aria-label={label} />
  );
  return (
    <ChangeRows
      name="quota_changes"
      addLabel={t('whatif.addQuota')}
      removeLabel={t('whatif.removeQuota')}
      initial={{}}
    >
      {(field) => (
        <>
          <Form.Item
            label={t('whatif.quota')}
            name={[field.name, 'quota']}
            rules={[{ required: true, message: t('whatif.pickQuota') }]}
          >
            <Select
              style={{ width: 320 }}
              loading={quotas.isLoading}
              aria-label={t('whatif.quota')}
              options={list.map((q) => ({
                value: quotaKey(q),
                label: t('whatif.quotaOption', {
                  tenant: q.tenant,
                  pool: q.pool_name,
                  model: q.accelerator_model,
                  guarantee: q.guarantee ?? 0,
                  borrow: q.borrow_limit ?? 0,
                }),
              }))}
              onChange={(key: string) => {
                const q = list.find((x) => quotaKey(x) === key);
                if (q) {
                  form.setFieldValue(['quota_changes', field.name, 'guarantee'], q.guarantee ?? 0);
                  form.setFieldValue(
                    ['quota_changes', field.name, 'borrow_limit'],
                    q.borrow_limit ?? 0,
                  );
                }
              }}
            />
          </Form.Item>
          <Form.Item label={t('whatif.guarantee')} name={[field.name, 'guarantee']}>
            {count(t('whatif.guarantee'))}
          </Form.Item>
          <Form.Item label={t('whatif.borrow')} name={[field.name, 'borrow_limit']}>
            {count(t('whatif.borrow'))}
          </Form.Item>
        </>
      )}
    </ChangeRows>
  );
}
