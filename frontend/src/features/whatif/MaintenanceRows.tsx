import { Checkbox, Form, InputNumber, Select } from 'antd';
import { useTranslation } from 'react-i18next';
import { usePools } from '../jobs/api';
import { ChangeRows } from './ChangeRows';

export interface MaintenanceValue {
  pool?: number;
  nodes?: number;
  start_h?: number;
  hours?: number;
  drain?: boolean;
}

/** The form's maintenance windows: when should these servers go down? */
export function MaintenanceRows() {
  const { t } = useTranslation();
  const pools = usePools();
  return (
    <ChangeRows
      name="maintenance"
      addLabel={t('whatif.addMaintenance')}
      removeLabel={t('whatif.removeMaintenance')}
      initial={{ nodes: 4, start_h: 24, hours: 8, drain: true }}
    >
      {(field) => (
        <>
          <Form.Item
            label={t('whatif.maintenancePool')}
            name={[field.name, 'pool']}
            rules={[{ required: true, message: t('whatif.pickPool') }]}
          >
            <Select
              style={{ width: 200 }}
              loading={pools.isLoading}
              aria-label={t('whatif.maintenancePool')}
              options={(pools.data ?? []).map((p) => ({
                value: p.id,
                label: `${p.cluster}/${p.name}`,
              }))}
            />
          </Form.Item>
          <Form.Item
            label={t('whatif.maintenanceNodes')}
            name={[field.name, 'nodes']}
            tooltip={t('whatif.maintenanceNodesHint')}
            rules={[{ required: true }]}
          >
            <InputNumber
              min={1}
              max={10000}
              precision={0}
              style={{ width: 76 }}
              aria-label={t('whatif.maintenanceNodes')}
            />
          </Form.Item>
          <Form.Item
            label={t('whatif.maintenanceStart')}
            name={[field.name, 'start_h']}
            tooltip={t('whatif.maintenanceStartHint')}
            rules={[{ required: true }]}
          >
            <InputNumber
              min={0}
              max={2160}
              style={{ width: 76 }}
              aria-label={t('whatif.maintenanceStart')}
            />
          </Form.Item>
          <Form.Item
            label={t('whatif.maintenanceHours')}
            name={[field.name, 'hours']}
            rules={[{ required: true }]}
          >
            <InputNumber
              min={0.1}
              max={2160}
              style={{ width: 76 }}
              aria-label={t('whatif.maintenanceHours')}
            />
          </Form.Item>
          <Form.Item
            name={[field.name, 'drain']}
            valuePropName="checked"
            tooltip={t('whatif.maintenanceDrainHint')}
          >
            <Checkbox>{t('whatif.maintenanceDrain')}</Checkbox>
          </Form.Item>
        </>
      )}
    </ChangeRows>
  );
}
