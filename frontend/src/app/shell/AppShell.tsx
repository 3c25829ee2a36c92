import { MenuFoldOutlined, MenuUnfoldOutlined } from '@ant-design/icons';
import { Button, Divider, Layout, Menu, Space } from 'antd';
import { Suspense, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Link, Outlet, useLocation } from 'react-router';
import { BrandMark } from '../../components/BrandMark';
import { ConnectionIndicator } from '../../components/ConnectionIndicator';
import { FullPageSpin } from '../../components/FullPageSpin';
import { LanguageSwitch } from '../../components/LanguageSwitch';
import { useLanguageSync, useSession } from '../../features/auth/api';
import { NoticeBell } from '../../features/governance/NoticeBell';
import { TenantSwitcher } from '../../features/tenancy/TenantSwitcher';
import { useTenant } from '../../features/tenancy/useTenant';
import { useLiveEvents } from '../../lib/liveEvents';
import { NAV_ITEMS, navItemFor, navLabel, offered } from '../nav';
import styles from './AppShell.module.css';
import { UserMenu } from './UserMenu';

const COLLAPSED_KEY = 'zhisuan.siderCollapsed';

function initialCollapsed(): boolean {
  try {
    return window.localStorage.getItem(COLLAPSED_KEY) === '1';
  } catch {
    return false;
  }
}

/** The signed-in frame: side navigation, header, and the current page. */
export function AppShell() {
  const { t } = useTranslation();
  const location = useLocation();
  const session = useSession();
  useLanguageSync(session.data);
  const [collapsed, setCollapsed] = useState(initialCollapsed);
  const selected = navItemFor(location.pathname);
  const tenant = useTenant();
  // One websocket for the whole console, following the tenant the user works in.
  useLiveEvents(tenant.slug);

  const toggle = () => {
    const next = !collapsed;
    setCollapsed(next);
    try {
      window.localStorage.setItem(COLLAPSED_KEY, next ? '1' : '0');
    } catch {
      // Only a preference.
    }
  };

  // RequireAuth renders the shell only with a session; this guards the type.
  if (!session.data) {
    return null;
  }
  const { user, memberships } = session.data;

  return (
    <Layout className={styles.root}>
      <Layout.Sider
        width={228}
        collapsedWidth={72}
        collapsed={collapsed}
        // Phones and narrow windows get the icon rail (not remembered: a wide window later
        // opens as the user left it).
        breakpoint="md"
        onBreakpoint={(narrow) => {
          if (narrow) setCollapsed(true);
        }}
        trigger={null}
        className={styles.sider}
        theme="dark"
      >
        <Link to="/overview" className={styles.brand} aria-label={t('app.name')}>
          <BrandMark size={30} />
          {!collapsed && (
            <span className={styles.brandText}>
              <span className={styles.brandNative}>{t('app.nameNative')}</span>
              <span className={styles.brandLatin}>{t('app.name')}</span>
            </span>
          )}
        </Link>
        <nav aria-label={t('nav.label')}>
          <Menu
            theme="dark"
            mode="inline"
            selectedKeys={selected ? [selected.key] : []}
            className={styles.menu}
            items={NAV_ITEMS.filter((item) =>
              offered(item, {
                hasTenant: tenant.slug !== null,
                isTenantAdmin: tenant.isTenantAdmin,
                isPlatformAdmin: tenant.isPlatformAdmin,
              }),
            ).map((item) => ({
              key: item.key,
              icon: item.icon,
              label: <Link to={item.path}>{navLabel(t, item.key)}</Link>,
            }))}
          />
        </nav>
      </Layout.Sider>
      <Layout>
        <Layout.Header className={styles.header}>
          <Button
            type="text"
            onClick={toggle}
            icon={collapsed ? <MenuUnfoldOutlined /> : <MenuFoldOutlined />}
            aria-label={collapsed ? t('nav.expand') : t('nav.collapse')}
          />
          <Space
            size={16}
            wrap
            className={styles.tools}
            separator={<Divider orientation="vertical" />}
          >
            <ConnectionIndicator />
            {tenant.slug !== null && <NoticeBell key={tenant.slug} tenant={tenant.slug} />}
            <TenantSwitcher memberships={memberships} isPlatformAdmin={user.is_platform_admin} />
            <LanguageSwitch />
            <UserMenu user={user} />
          </Space>
        </Layout.Header>
        <Layout.Content className={styles.content}>
          <Suspense fallback={<FullPageSpin />}>
            <Outlet />
          </Suspense>
        </Layout.Content>
      </Layout>
    </Layout>
  );
}
