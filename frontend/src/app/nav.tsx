import {
  ApiOutlined,
  AppstoreOutlined,
  ClusterOutlined,
  CodeOutlined,
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
  'quotas',
  'whatif',
  'health',
  'usage',
  'settings',
] as const;

export type NavKey = (typeof NAV_KEYS)[number];

export interface NavItem {
  key: NavKey;
  path: string;
  icon: ReactNode;
  /** False while the area is a "coming soon" placeholder. */
  built: boolean;
}

export const NAV_ITEMS: NavItem[] = [
  { key: 'overview', path: '/overview', icon: <DashboardOutlined />, built: true },
  { key: 'cluster', path: '/cluster', icon: <ClusterOutlined />, built: true },
  { key: 'jobs', path: '/jobs', icon: <RocketOutlined />, built: true },
  { key: 'notebooks', path: '/notebooks', icon: <CodeOutlined />, built: true },
  { key: 'inference', path: '/inference', icon: <ApiOutlined />, built: true },
  { key: 'experiments', path: '/experiments', icon: <ExperimentOutlined />, built: true },
  { key: 'quotas', path: '/quotas', icon: <AppstoreOutlined />, built: true },
  { key: 'whatif', path: '/what-if', icon: <HistoryOutlined />, built: true },
  { key: 'health', path: '/health', icon: <MedicineBoxOutlined />, built: true },
  { key: 'usage', path: '/usage', icon: <FundOutlined />, built: true },
  { key: 'settings', path: '/settings', icon: <SettingOutlined />, built: true },
];

export function navLabel(t: TFunction, key: NavKey): string {
  return t(`nav.${key}`);
}

/** The nav item whose path is the first segment of `pathname`. */
export function navItemFor(pathname: string): NavItem | undefined {
  const first = `/${pathname.split('/')[1] ?? ''}`;
  return NAV_ITEMS.find((item) => item.path === first);
}
