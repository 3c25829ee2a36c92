import { App, Empty, Form, Input, Space, Table, Typography } from 'antd';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { CreateButton } from '../../components/CreateButton';
import { EditDeleteButtons } from '../../components/EditDeleteButtons';
import { FormModal } from '../../components/FormModal';
import { QueryErrorResult } from '../../components/QueryErrorResult';
import { formatDateTime } from '../../lib/format';
import { applyServerErrors } from '../../lib/formErrors';
import { currentLanguage } from '../../lib/i18n';
import type { Project } from '../../lib/apiTypes';
import { useDeleteProject, useProjects, useSaveProject, type ProjectValues } from './api';

/**
 * Settings > Projects: the tenant's projects, which label jobs so that usage and cost add up
 * per project (Usage & Cost groups by them). Members and tenant admins create, rename and
 * delete them; viewers read.
 */
export function ProjectsTab({ tenant, canWrite }: { tenant: string; canWrite: boolean }) {
  const { t } = useTranslation();
  const language = currentLanguage();
  const { message } = App.useApp();
  const projects = useProjects(tenant);
  const remove = useDeleteProject(tenant);
  const [editing, setEditing] = useState<Project | 'new' | null>(null);
  if (projects.isError)
    return <QueryErrorResult error={projects.error} onRetry={() => void projects.refetch()} />;
  return (
    <Space orientation="vertical" size={12} style={{ width: '100%' }}>
      <Space style={{ width: '100%', justifyContent: 'space-between' }}>
        <Typography.Text type="secondary">{t('projects.hint')}</Typography.Text>
        {canWrite && (
          <CreateButton
            label={t('projects.new')}
            onClick={() => {
              setEditing('new');
            }}
          />
        )}
      </Space>
      <Table<Project>
        rowKey="id"
        size="small"
        data-testid="projects-table"
        loading={projects.isPending}
        pagination={false}
        dataSource={projects.data ?? []}
        locale={{ emptyText: <Empty description={t('projects.empty')} /> }}
        columns={[
          { title: t('projects.name'), dataIndex: 'name' },
          {
            title: t('projects.description'),
            dataIndex: 'description',
            render: (d: string) => d || '—',
          },
          {
            title: t('projects.createdBy'),
            dataIndex: 'created_by',
            render: (u: string | null) => u ?? '—',
          },
          {
            title: t('projects.createdAt'),
            dataIndex: 'created_at',
            render: (at: string) => formatDateTime(at, language),
          },
          ...(canWrite
            ? [
                {
                  title: '',
                  key: 'actions',
                  render: (_: unknown, p: Project) => (
                    <EditDeleteButtons
                      editLabel={t('projects.edit', { name: p.name })}
                      deleteLabel={t('projects.deleteLabel', { name: p.name })}
                      confirm={t('projects.deleteConfirm', { name: p.name })}
                      deleteText={t('projects.delete')}
                      onEdit={() => {
                        setEditing(p);
                      }}
                      onDelete={() => {
                        remove.mutate(p.id, {
                          onSuccess: () =>
                            void message.success(t('projects.deleted', { name: p.name })),
                          onError: (error) => void message.error(error.summary),
                        });
                      }}
                    />
                  ),
                },
              ]
            : []),
        ]}
      />
      {editing !== null && (
        <ProjectModal
          tenant={tenant}
          project={editing === 'new' ? null : editing}
          onClose={() => {
            setEditing(null);
          }}
        />
      )}
    </Space>
  );
}

function ProjectModal({
  tenant,
  project,
  onClose,
}: {
  tenant: string;
  project: Project | null;
  onClose: () => void;
}) {
  const { t } = useTranslation();
  const { message } = App.useApp();
  const [form] = Form.useForm<ProjectValues>();
  const save = useSaveProject(tenant);
  return (
    <FormModal
      title={project === null ? t('projects.new') : t('projects.editTitle', { name: project.name })}
      okText={t('projects.save')}
      form={form}
      pending={save.isPending}
      onClose={onClose}
    >
      <Form<ProjectValues>
        form={form}
        layout="vertical"
        initialValues={project ?? {}}
        onFinish={(values) => {
          save.mutate(
            { ...values, id: project?.id },
            {
              onSuccess: (saved) => {
                void message.success(t('projects.saved', { name: saved.name }));
                onClose();
              },
              onError: (error) => {
                const { unmatched } = applyServerErrors(form, error, [['name'], ['description']]);
                if (unmatched.length > 0) void message.error(unmatched.join(' '));
              },
            },
          );
        }}
      >
        <Form.Item
          name="name"
          label={t('projects.name')}
          rules={[
            { required: true, whitespace: true, message: t('projects.nameRequired') },
            { max: 64 },
          ]}
        >
          <Input placeholder="llm-pretrain" />
        </Form.Item>
        <Form.Item name="description" label={t('projects.description')}>
          <Input.TextArea rows={2} />
        </Form.Item>
      </Form>
    </FormModal>
  );
}
