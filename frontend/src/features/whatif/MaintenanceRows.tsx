import { Checkbox, Form, InputNumber, type FormListFieldData } from 'antd';
import { useTranslation } from 'react-i18next';
import { ChangeRows, PoolItem } from './ChangeRows';

export interface MaintenanceValue {
  pool?: number;
  nodes?: number;
  start_h?: number;
  hours?: number;
  drain?: boolean;
}

interface NumberItemProps {
  field: FormListFieldData;
  name: 'nodes' | 'start_h' | 'hours';
  label: string;
  tooltip?: string;
  min: number;
  precision?: number;
}

/** One of a window's numbers: required, labelled for assistive technology too. */
function NumberItem({ field, name, label, tooltip, min, precision }: NumberItemProps) {
  return (
    <Form.Item
      label={label}
      name={[field.name, name]}
      tooltip={tooltip}
      rules={[{ required: true }]}
    >
      <InputNumber
        min={min}
        max={name === 'nodes' ? 10000 : 2160}
        precision={precision}
        style={{ width: 76 }}
        aria-label={label}
      />
    </Form.Item>
  );
}

/** The form's maintenance windows: when should these servers go down? */
export function MaintenanceRows() {
  const { t } = useTranslation();
  return (
    <ChangeRows
      name="maintenance"
      addLabel={t('whatif.addMaintenance')}
      removeLabel={t('whatif.removeMaintenance')}
      initial={{ nodes: 4, start_h: 24, hours: 8, drain: true }}
    >
      {(field) => (
        <>
          <PoolItem field={field} label={t('whatif.maintenancePool')} />
          <NumberItem
            field={field}
            name="nodes"
            label={t('whatif.maintenanceNodes')}
            tooltip={t('whatif.maintenanceNodesHint')}
            min={1}
            precision={0}
          />
          <NumberItem
            field={field}
            name="start_h"
            label={t('whatif.maintenanceStart')}
            tooltip={t('whatif.maintenanceStartHint')}
            min={0}
          />
          <NumberItem field={field} name="hours" label={t('whatif.maintenanceHours')} min={0.1} />
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
