import { useMutation, useQueryClient } from '@tanstack/react-query';
import { Alert, Form, Input, InputNumber, Select } from 'antd';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { FormModal } from '../../components/FormModal';
import { api, type ApiError, unwrap } from '../../lib/api';
import type { InferenceService, InferenceServiceSubmit } from '../../lib/apiTypes';
import { applyServerErrors } from '../../lib/formErrors';
import { usePools } from '../jobs/api';
import { nameRules } from '../jobs/helpers';
import { poolOptions } from '../../lib/poolOptions';

interface ServiceValues {
  name: string;
  runtime_image: string;
  model_uri: string;
  pool?: number;
  accelerators: number;
  min_replicas: number;
  max_replicas: number;
}

/** What the form sets; the server gives every other setting (scaling target, probes...) its
 * default, which the service's page shows and a PATCH can change. */
type ServiceCreate = Pick<InferenceServiceSubmit, keyof Omit<ServiceValues, 'pool'> | 'pool'>;

const FIELDS: (keyof ServiceValues)[] = [
  'name',
  'runtime_image',
  'model_uri',
  'pool',
  'accelerators',
  'min_replicas',
  'max_replicas',
];

function useCreateService(tenant: string) {
  const client = useQueryClient();
  return useMutation<InferenceService, ApiError, ServiceCreate>({
    mutationFn: (body) =>
      unwrap(
        api.POST('/api/v1/tenants/{tenant}/inference/services/', {
          params: { path: { tenant } },
          body: body as InferenceServiceSubmit,
        }),
      ),
    onSuccess: () => void client.invalidateQueries({ queryKey: ['inference', tenant] }),
  });
}

export function CreateServiceModal({ tenant, onClose }: { tenant: string; onClose: () => void }) {
  const { t } = useTranslation();
  const [form] = Form.useForm<ServiceValues>();
  const pools = usePools();
  const create = useCreateService(tenant);
  const [formError, setFormError] = useState<string[]>([]);

  const onFinish = (values: ServiceValues) => {
    setFormError([]);
    create.mutate(
      {
        name: values.name.trim(),
        runtime_image: values.runtime_image.trim(),
        model_uri: values.model_uri.trim(),
        pool: values.pool ?? 0,
        accelerators: values.accelerators,
        min_replicas: values.min_replicas,
        max_replicas: values.max_replicas,
      },
      {
        onSuccess: onClose,
        onError: (error) => {
          setFormError(
            applyServerErrors(
              form,
              error,
              FIELDS.map((f) => [f]),
            ).unmatched,
          );
        },
      },
    );
  };

  return (
    <FormModal
      title={t('inference.create')}
      okText={t('inference.deploy')}
      form={form}
      pending={create.isPending}
      onClose={onClose}
    >
      <Form<ServiceValues>
        form={form}
        layout="vertical"
        name="inference"
        initialValues={{
          runtime_image: 'vllm/vllm-openai:v0.6.3',
          accelerators: 1,
          min_replicas: 1,
          max_replicas: 4,
        }}
        onFinish={onFinish}
      >
        <Form.Item name="name" label={t('inference.name')} rules={nameRules(t)}>
          <Input placeholder="qwen-chat" />
        </Form.Item>
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
          <Input placeholder="s3://models/qwen2-7b" />
        </Form.Item>
        <Form.Item
          name="pool"
          label={t('submit.pool')}
          rules={[{ required: true, message: t('submit.poolRequired') }]}
        >
          <Select<number> loading={pools.isPending} options={poolOptions(pools.data)} />
        </Form.Item>
        <Form.Item name="accelerators" label={t('inference.acceleratorsPerReplica')}>
          <InputNumber min={1} max={16} />
        </Form.Item>
        <Form.Item name="min_replicas" label={t('inference.minReplicas')}>
          <InputNumber min={1} max={512} />
        </Form.Item>
        <Form.Item name="max_replicas" label={t('inference.maxReplicas')}>
          <InputNumber min={1} max={512} />
        </Form.Item>
        {formError.length > 0 && <Alert type="error" showIcon title={formError.join(' ')} />}
      </Form>
    </FormModal>
  );
}
