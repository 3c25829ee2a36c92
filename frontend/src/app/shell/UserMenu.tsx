import { LogoutOutlined, UserOutlined } from '@ant-design/icons';
import { Avatar, Button, Dropdown, Space, Tag } from 'antd';
import { useTranslation } from 'react-i18next';
import { useNavigate } from 'react-router';
import { useLogout } from '../../features/auth/api';
import type { SessionUser } from '../../lib/apiTypes';

export function UserMenu({ user }: { user: SessionUser }) {
  const { t } = useTranslation();
  const navigate = useNavigate();
  const logout = useLogout();
  const name = user.display_name || user.username;

  return (
    <Dropdown
      trigger={['click']}
      menu={{
        items: [
          {
            key: 'who',
            disabled: true,
            label: (
              <Space orientation="vertical" size={0}>
                <span style={{ color: 'rgba(0,0,0,0.88)', fontWeight: 500 }}>{name}</span>
                <span style={{ fontSize: 12 }}>{user.username}</span>
                {user.is_platform_admin && (
                  <Tag color="gold" style={{ marginTop: 4 }}>
                    {t('header.platformAdmin')}
                  </Tag>
                )}
              </Space>
            ),
          },
          { type: 'divider' },
          {
            key: 'logout',
            icon: <LogoutOutlined />,
            label: t('header.logout'),
            onClick: () => {
              logout.mutate(undefined, {
                onSettled: () => void navigate('/login', { replace: true }),
              });
            },
          },
        ],
      }}
    >
      <Button type="text" aria-label={t('header.userMenu')} data-testid="user-menu">
        <Space size={8}>
          <Avatar size="small" icon={<UserOutlined />} style={{ background: '#2f6fed' }} />
          <span>{name}</span>
        </Space>
      </Button>
    </Dropdown>
  );
}
