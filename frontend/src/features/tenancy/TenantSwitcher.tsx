import { TeamOutlined } from '@ant-design/icons';
import { Select, Space, Tag, Typography } from 'antd';
import { useTranslation } from 'react-i18next';
import type { Membership } from '../../lib/apiTypes';
import { setCurrentTenantSlug, useCurrentMembership } from './currentTenant';

interface Props {
  memberships: Membership[];
  isPlatformAdmin: boolean;
}

/** Picks the tenant to work in; a platform admin without memberships sees the platform badge. */
export function TenantSwitcher({ memberships, isPlatformAdmin }: Props) {
  const { t } = useTranslation();
  const current = useCurrentMembership(memberships);

  if (current === null) {
    if (isPlatformAdmin) {
      return (
        <Tag color="gold" data-testid="tenant-platform" style={{ marginInlineEnd: 0 }}>
          {t('header.platformAdmin')}
        </Tag>
      );
    }
    return (
      <Typography.Text type="secondary" data-testid="tenant-none">
        <TeamOutlined /> {t('header.noTenant')}
      </Typography.Text>
    );
  }
  return (
    <Space size={6}>
      <TeamOutlined aria-hidden style={{ color: 'rgba(0,0,0,0.45)' }} />
      <Select<string>
        aria-label={t('header.tenant')}
        data-testid="tenant-switcher"
        value={current.tenant.slug}
        onChange={setCurrentTenantSlug}
        popupMatchSelectWidth={false}
        style={{ minWidth: 180 }}
        options={memberships.map((m) => ({
          value: m.tenant.slug,
          label: (
            <Space size={8}>
              <span>{m.tenant.name}</span>
              <Typography.Text type="secondary" style={{ fontSize: 12 }}>
                {t(`roles.${m.role}`)}
              </Typography.Text>
            </Space>
          ),
        }))}
      />
    </Space>
  );
}
