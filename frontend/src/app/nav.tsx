import {
  ApiOutlined,
  AppstoreOutlined,
  ClusterOutlined,
  CodeOutlined,
  ControlOutlined,
  DashboardOutlined,
  ExperimentOutlined,
  FundOutlined,
  HistoryOutlined,
  MedicineBoxOutlined,
  RocketOutlined,
  SettingOutlined,
} from '@ant-design/icons';
import type { TFunction } from 'i18next';
import type { ReactNode } from 'react';

/** The product areas, in navigation order. One list drives the side menu and the routes. */
export const NAV_KEYS = [
  'overview',
  'cluster',
  'jobs',
  'notebooks',
  'inference',
  'experiments',
  'sweeps',
  'quotas',
  'whatif',
  'health',
  'usage',
  'settings',
] as const;

export type NavKey = (typeof NAV_KEYS)[number];

/** Who may use an area: the menu offers only those (the pages still say so when opened). */
export type Audience = 'everyone' | 'tenant' | 'admins' | 'platform';

export interface NavItem {
  key: NavKey;
  path: string;
  icon: ReactNode;
  /** False while the area is a "coming soon" placeholder. */
  built: boolean;
  /**
   * `tenant`: needs a tenant to work in (a platform admin may have none); `admins`: tenant
   * admins and platform admins; `platform`: platform admins.
   */
  audience: Audience;
}

export const NAV_ITEMS: NavItem[] = [
  {
    key: 'overview',
    path: '/overview',
    icon: <DashboardOutlined />,
    built: true,
    audience: 'everyone',
  },
  {
    key: 'cluster',
    path: '/cluster',
    icon: <ClusterOutlined />,
    built: true,
    audience: 'everyone',
  },
  { key: 'jobs', path: '/jobs', icon: <RocketOutlined />, built: true, audience: 'tenant' },
  { key: 'notebooks', path: '/notebooks', icon: <CodeOutlined />, built: true, audience: 'tenant' },
  { key: 'inference', path: '/inference', icon: <ApiOutlined />, built: true, audience: 'tenant' },
  {
    key: 'experiments',
    path: '/experiments',
    icon: <ExperimentOutlined />,
    built: true,
    audience: 'tenant',
  },
  { key: 'sweeps', path: '/sweeps', icon: <ControlOutlined />, built: true, audience: 'tenant' },
  { key: 'quotas', path: '/quotas', icon: <AppstoreOutlined />, built: true, audience: 'everyone' },
  { key: 'whatif', path: '/what-if', icon: <HistoryOutlined />, built: true, audience: 'platform' },
  {
    key: 'health',
    path: '/health',
    icon: <MedicineBoxOutlined />,
    built: true,
    audience: 'platform',
  },
  { key: 'usage', path: '/usage', icon: <FundOutlined />, built: true, audience: 'admins' },
  {
    key: 'settings',
    path: '/settings',
    icon: <SettingOutlined />,
    built: true,
    audience: 'everyone',
  },
];

export interface Viewer {
  hasTenant: boolean;
  isTenantAdmin: boolean;
  isPlatformAdmin: boolean;
}

/** Whether the menu offers `item` to this user. */
export function offered(item: NavItem, viewer: Viewer): boolean {
  switch (item.audience) {
    case 'everyone':
      return true;
    case 'tenant':
      return viewer.hasTenant;
    case 'admins':
      return viewer.isTenantAdmin;
    case 'platform':
      return viewer.isPlatformAdmin;
  }
}

export function navLabel(t: TFunction, key: NavKey): string {
  return t(`nav.${key}`);
}

/** The nav item whose path is the first segment of `pathname`. */
export function navItemFor(pathname: string): NavItem | undefined {
  const first = `/${pathname.split('/')[1] ?? ''}`;
  return NAV_ITEMS.find((item) => item.path === first);
}
