import { Tag } from 'antd';
import type { ColumnsType, ColumnType } from 'antd/es/table';
import type { TFunction } from 'i18next';
import type { Alert, Incident } from '../../lib/apiTypes';
import { formatDateTime } from '../../lib/format';
import type { Language } from '../../lib/i18n';
import { SEVERITY_COLOR } from './healthStyle';
import { IncidentDetail, ResolveIncidentButton } from './IncidentDetail';

/**
 * The incident columns both the health page and the node page show, in order: fault, severity,
 * action, jobs affected, opened. Each page adds its own around them (node or state before,
 * closed time and detail after).
 */
export function incidentColumns(t: TFunction, language: Language): ColumnsType<Incident> {
  return [
    { title: t('health.fault'), dataIndex: 'fault' },
    {
      title: t('health.severity'),
      dataIndex: 'severity',
      render: (s: Alert['severity']) => <Tag color={SEVERITY_COLOR[s]}>{t(`severity.${s}`)}</Tag>,
    },
    {
      title: t('health.action'),
      dataIndex: 'fault_action',
      render: (a: Incident['fault_action']) => t(`faultAction.${a}`),
    },
    { title: t('health.jobsAffected'), key: 'jobs', render: (_, i) => i.jobs.length },
    {
      title: t('health.opened'),
      dataIndex: 'opened_at',
      render: (a: string) => formatDateTime(a, language),
    },
  ];
}

/** The Resolve column both incident tables end with. */
export function resolveColumn(title: string): ColumnType<Incident> {
  return {
    title,
    key: 'resolve',
    render: (_, incident) => <ResolveIncidentButton incident={incident} />,
  };
}

/** Rows unfold into their self-healing detail. */
export const incidentExpandable = {
  expandedRowRender: (incident: Incident) => <IncidentDetail incident={incident} />,
};
