import { StopOutlined } from '@ant-design/icons';
import {
  Alert as Notice,
  App,
  Button,
  Empty,
  Form,
  Modal,
  Popconfirm,
  Select,
  Space,
  Switch,
  Tag,
  Typography,
} from 'antd';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Link } from 'react-router';
import { CreateButton } from '../../components/CreateButton';
import { CursorPager } from '../../components/CursorPager';
import { FormModal } from '../../components/FormModal';
import { NameSearch } from '../../components/NameSearch';
import { QueryTable } from '../../components/QueryTable';
import type { NodeToken } from '../../lib/apiTypes';
import { useCursorPages } from '../../lib/cursorPages';
import { formatDateTime } from '../../lib/format';
import { applyServerErrors } from '../../lib/formErrors';
import { currentLanguage } from '../../lib/i18n';
import {
  useMintToken,
  useNodeSearch,
  useNodeTokens,
  useRevokeToken,
  type TokenFilters,
} from './consoleApi';

/**
 * Health > Node agents: the tokens node agents report with, each bound to one node. A fleet
 * gets its tokens in bulk (`manage.py distribute_node_tokens`); here an operator mints one
 * for a single node (a replaced node, a test) and revokes a leaked or retired one.
 */
export function NodeTokensTab() {
  const { t } = useTranslation();
  const language = currentLanguage();
  const { message } = App.useApp();
  const [filters, setFilters] = useState<TokenFilters>({ nodeName: '', activeOnly: true });
  const pages = useCursorPages(JSON.stringify(filters));
  const tokens = useNodeTokens(filters, pages.cursor);
  const revoke = useRevokeToken();
  const [minting, setMinting] = useState(false);
  const [minted, setMinted] = useState<NodeToken | null>(null);
  return (
    <Space orientation="vertical" size={12} style={{ width: '100%' }}>
      <Typography.Text type="secondary">{t('nodeAgents.hint')}</Typography.Text>
      <Space style={{ width: '100%', justifyContent: 'space-between' }} wrap>
        <Space wrap>
          <NameSearch
            label={t('nodeAgents.searchNode')}
            onSearch={(name) => {
              setFilters((f) => ({ ...f, nodeName: name ?? '' }));
            }}
          />
          <Space size={6}>
            <Switch
              size="small"
              checked={filters.activeOnly}
              aria-label={t('nodeAgents.activeOnly')}
              onChange={(on) => {
                setFilters((f) => ({ ...f, activeOnly: on }));
              }}
            />
            <Typography.Text>{t('nodeAgents.activeOnly')}</Typography.Text>
          </Space>
        </Space>
        <CreateButton
          label={t('nodeAgents.mint')}
          onClick={() => {
            setMinting(true);
          }}
        />
      </Space>
      <QueryTable<NodeToken>
        rowKey="id"
        size="small"
        data-testid="node-tokens"
        query={tokens}
        rows={tokens.data?.results ?? []}
        pagination={false}
        locale={{ emptyText: <Empty description={t('nodeAgents.empty')} /> }}
        columns={[
          {
            title: t('health.node'),
            dataIndex: 'node_name',
            render: (name: string, token) => <Link to={`/health/nodes/${token.node}`}>{name}</Link>,
          },
          {
            title: t('nodeAgents.prefix'),
            dataIndex: 'prefix',
            render: (prefix: string) => <Typography.Text code>{prefix}…</Typography.Text>,
          },
          {
            title: t('nodeAgents.created'),
            dataIndex: 'created_at',
            render: (at: string) => formatDateTime(at, language),
          },
          {
            title: t('nodeAgents.lastUsed'),
            dataIndex: 'last_used_at',
            render: (at: string | null) =>
              at === null ? t('nodeAgents.neverUsed') : formatDateTime(at, language),
          },
          {
            title: t('nodeAgents.state'),
            key: 'state',
            render: (_, token) =>
              token.revoked_at === null ? (
                <Tag color="green">{t('nodeAgents.active')}</Tag>
              ) : (
                <Tag>
                  {t('nodeAgents.revokedAt', { time: formatDateTime(token.revoked_at, language) })}
                </Tag>
              ),
          },
          {
            title: '',
            key: 'revoke',
            render: (_, token) =>
              token.revoked_at === null && (
                <Popconfirm
                  title={t('nodeAgents.revokeConfirm', { node: token.node_name })}
                  okText={t('nodeAgents.revoke')}
                  cancelText={t('common.no')}
                  onConfirm={() => {
                    revoke.mutate(token.id, {
                      onSuccess: () =>
                        void message.success(t('nodeAgents.revoked', { node: token.node_name })),
                      onError: (error) => void message.error(error.summary),
                    });
                  }}
                >
                  <Button
                    size="small"
                    danger
                    icon={<StopOutlined />}
                    data-testid={`revoke-${token.id}`}
                  >
                    {t('nodeAgents.revoke')}
                  </Button>
                </Popconfirm>
              ),
          },
        ]}
      />
      <CursorPager pages={pages} query={tokens} testId="node-tokens" size="small" />
      {minting && (
        <MintModal
          onClose={() => {
            setMinting(false);
          }}
          onMinted={(token) => {
            setMinting(false);
            setMinted(token);
          }}
        />
      )}
      {minted !== null && (
        <Modal
          open
          title={t('nodeAgents.mintedTitle', { node: minted.node_name })}
          onCancel={() => {
            setMinted(null);
          }}
          footer={
            <Button
              type="primary"
              onClick={() => {
                setMinted(null);
              }}
            >
              {t('nodeAgents.done')}
            </Button>
          }
        >
          <Space orientation="vertical" style={{ width: '100%' }}>
            <Notice type="warning" showIcon title={t('nodeAgents.shownOnce')} />
            <Typography.Paragraph code copyable data-testid="minted-token">
              {minted.token}
            </Typography.Paragraph>
            <Typography.Text type="secondary">
              {t('nodeAgents.install', { node: minted.node_name })}
            </Typography.Text>
          </Space>
        </Modal>
      )}
    </Space>
  );
}

function MintModal({
  onClose,
  onMinted,
}: {
  onClose: () => void;
  onMinted: (token: NodeToken) => void;
}) {
  const { t } = useTranslation();
  const { message } = App.useApp();
  const [form] = Form.useForm<{ node: number }>();
  const [search, setSearch] = useState('');
  const nodes = useNodeSearch(search);
  const mint = useMintToken();
  return (
    <FormModal
      title={t('nodeAgents.mint')}
      okText={t('nodeAgents.mintOk')}
      form={form}
      pending={mint.isPending}
      onClose={onClose}
    >
      <Form<{ node: number }>
        form={form}
        layout="vertical"
        onFinish={({ node }) => {
          mint.mutate(node, {
            onSuccess: onMinted,
            onError: (error) => {
              const { unmatched } = applyServerErrors(form, error, [['node']]);
              if (unmatched.length > 0) void message.error(unmatched.join(' '));
            },
          });
        }}
      >
        <Form.Item
          name="node"
          label={t('health.node')}
          extra={t('nodeAgents.nodeHelp')}
          rules={[{ required: true }]}
        >
          <Select
            showSearch={{ filterOption: false, onSearch: setSearch }}
            loading={nodes.isFetching}
            placeholder={t('nodeAgents.searchNode')}
            options={(nodes.data ?? []).map((n) => ({ value: n.id, label: n.name }))}
          />
        </Form.Item>
      </Form>
    </FormModal>
  );
}
