import { CloudUploadOutlined } from '@ant-design/icons';
import { Alert, App, Button, Form, Input, Typography } from 'antd';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { FormModal } from '../../components/FormModal';
import type { InferenceService } from '../../lib/apiTypes';
import { applyServerErrors } from '../../lib/formErrors';
import { ACTIVE_STATES } from '../../lib/jobStates';
import { useTenant } from '../tenancy/useTenant';
import { type ModelChange, useUpdateModel } from './api';
import { isJobState } from './labels';

interface ModelValues {
  runtime_image: string;
  model_uri: string;
}

const FIELDS: (keyof ModelValues)[] = ['runtime_image', 'model_uri'];

/**
 * Serves another runtime image or model: a new revision, rolled out replica by replica. Any
 * member who may write may change a service (the server's rule), while it has not ended (an
 * ended one is refused).
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

  const onFinish = (values: ModelValues) => {
    setFormError([]);
    const change: ModelChange = {};
    for (const field of FIELDS) {
      const value = values[field].trim();
      if (value !== service[field]) change[field] = value;
    }
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
        initialValues={{ runtime_image: service.runtime_image, model_uri: service.model_uri }}
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
        {formError.length > 0 && <Alert type="error" showIcon title={formError.join(' ')} />}
      </Form>
    </FormModal>
  );
}
