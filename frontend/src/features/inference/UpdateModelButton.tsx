import { CloudUploadOutlined } from '@ant-design/icons';
import { Alert, App, Button, Collapse, Form, Input, InputNumber, Typography } from 'antd';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { FormModal } from '../../components/FormModal';
import type { InferenceService } from '../../lib/apiTypes';
import { applyServerErrors } from '../../lib/formErrors';
import { ACTIVE_STATES } from '../../lib/jobStates';
import { useTenant } from '../tenancy/useTenant';
import { type ModelChange, useUpdateModel } from './api';
import { isJobState, SERVING_FIELDS } from './labels';

type ModelValues = Required<ModelChange>;

const FIELDS = ['runtime_image', 'model_uri', ...SERVING_FIELDS] as const;

function changed(values: ModelValues, service: InferenceService): ModelChange {
  const change: ModelChange = {};
  for (const field of FIELDS) {
    const value = values[field];
    const wanted = typeof value === 'string' ? value.trim() : value;
    if (wanted !== service[field]) Object.assign(change, { [field]: wanted });
  }
  return change;
}

/**
 * Serves another runtime image, model, port or probes: a new revision, rolled out replica by
 * replica. Any member who may write may change a service (the server's rule), while it has
 * not ended (an ended one is refused).
 */
export function UpdateModelButton({
  tenant,
  service,
}: {
  tenant: string;
  service: InferenceService;
}) {
  const { t } = useTranslation();
  const { canWrite } = useTenant();
  const [open, setOpen] = useState(false);
  const active = isJobState(service.state) && ACTIVE_STATES.includes(service.state);
  if (!active || !canWrite) return null;
  return (
    <>
      <Button
        icon={<CloudUploadOutlined />}
        onClick={() => {
          setOpen(true);
        }}
      >
        {t('inference.updateModel')}
      </Button>
      {open && (
        <UpdateModelModal
          tenant={tenant}
          service={service}
          onClose={() => {
            setOpen(false);
          }}
        />
      )}
    </>
  );
}

export function UpdateModelModal({
  tenant,
  service,
  onClose,
}: {
  tenant: string;
  service: InferenceService;
  onClose: () => void;
}) {
  const { t } = useTranslation();
  const { message } = App.useApp();
  const [form] = Form.useForm<ModelValues>();
  const update = useUpdateModel(tenant, service.id);
  const [formError, setFormError] = useState<string[]>([]);
  const [sections, setSections] = useState<string[]>([]);

  const onFinish = (values: ModelValues) => {
    setFormError([]);
    const change = changed(values, service);
    if (Object.keys(change).length === 0) {
      setFormError([t('inference.updateUnchanged')]);
      return;
    }
    update.mutate(change, {
      onSuccess: (updated) => {
        void message.success(
          updated.rollout_state === ''
            ? t('inference.updatePending', { revision: updated.revision })
            : t('inference.updateStarted', { revision: updated.revision }),
        );
        onClose();
      },
      onError: (error) => {
        setFormError(
          applyServerErrors(
            form,
            error,
            FIELDS.map((f) => [f]),
          ).unmatched,
        );
        // A refused port or probe is shown on its field, so the section opens.
        if (SERVING_FIELDS.some((field) => form.getFieldError(field).length > 0)) {
          setSections(['serving']);
        }
      },
    });
  };

  return (
    <FormModal
      title={t('inference.updateTitle', { name: service.name })}
      okText={t('inference.updateOk')}
      form={form}
      pending={update.isPending}
      onClose={onClose}
    >
      <Form<ModelValues>
        form={form}
        layout="vertical"
        name="inference-update"
        initialValues={Object.fromEntries(FIELDS.map((field) => [field, service[field]]))}
        onFinish={onFinish}
      >
        <Typography.Paragraph type="secondary" data-testid="update-hint">
          {t('inference.updateHint', {
            surge: service.max_surge,
            unavailable: service.max_unavailable,
          })}
        </Typography.Paragraph>
        <Form.Item
          name="runtime_image"
          label={t('inference.runtime')}
          rules={[{ required: true, whitespace: true, message: t('submit.imageRequired') }]}
        >
          <Input />
        </Form.Item>
        <Form.Item
          name="model_uri"
          label={t('inference.model')}
          extra={t('inference.modelHint')}
          rules={[{ required: true, whitespace: true, message: t('inference.modelRequired') }]}
        >
          <Input />
        </Form.Item>
        <Collapse
          size="small"
          style={{ marginBottom: 16 }}
          activeKey={sections}
          onChange={(keys) => {
            setSections(keys);
          }}
          items={[
            {
              key: 'serving',
              label: t('inference.portAndProbes'),
              forceRender: true,
              children: (
                <>
                  <Form.Item name="port" label={t('inference.port')}>
                    <InputNumber min={1} max={65535} precision={0} />
                  </Form.Item>
                  <Form.Item name="readiness_path" label={t('inference.readinessPath')}>
                    <Input />
                  </Form.Item>
                  <Form.Item name="liveness_path" label={t('inference.livenessPath')}>
                    <Input />
                  </Form.Item>
                  <Form.Item name="probe_initial_delay_s" label={t('inference.probeDelay')}>
                    <InputNumber min={0} max={3600} precision={0} suffix="s" />
                  </Form.Item>
                  <Form.Item name="probe_period_s" label={t('inference.probePeriod')}>
                    <InputNumber min={1} max={300} precision={0} suffix="s" />
                  </Form.Item>
                </>
              ),
            },
          ]}
        />
        {formError.length > 0 && <Alert type="error" showIcon title={formError.join(' ')} />}
      </Form>
    </FormModal>
  );
}
