import { Table, Tag } from 'antd';
import type { ColumnsType } from 'antd/es/table';
import { useTranslation } from 'react-i18next';
import type { GpuModelCount } from '../../lib/apiTypes';
import { formatInteger, formatShare } from '../../lib/format';
import { currentLanguage } from '../../lib/i18n';

// Vendor codes the backend knows (apps.clusters.models.Vendor); others show as sent.
const VENDORS = {
  nvidia: { color: 'green', label: 'vendors.nvidia' },
  huawei: { color: 'red', label: 'vendors.huawei' },
  none: { color: 'default', label: 'vendors.none' },
} as const;

function isKnownVendor(vendor: string): vendor is keyof typeof VENDORS {
  return Object.hasOwn(VENDORS, vendor);
}

export function GpuModelTable({ rows, total }: { rows: GpuModelCount[]; total: number }) {
  const { t } = useTranslation();
  const language = currentLanguage();
  const columns: ColumnsType<GpuModelCount> = [
    { title: t('overview.modelColumn'), dataIndex: 'model', key: 'model' },
    {
      title: t('overview.vendorColumn'),
      dataIndex: 'vendor',
      key: 'vendor',
      render: (vendor: string) =>
        isKnownVendor(vendor) ? (
          <Tag color={VENDORS[vendor].color}>{t(VENDORS[vendor].label)}</Tag>
        ) : (
          <Tag>{vendor}</Tag>
        ),
    },
    {
      title: t('overview.countColumn'),
      dataIndex: 'count',
      key: 'count',
      align: 'right',
      render: (count: number) => formatInteger(count, language),
    },
    {
      title: t('overview.share'),
      key: 'share',
      align: 'right',
      render: (_: unknown, row) => formatShare(row.count, total, language),
    },
  ];
  return (
    <Table<GpuModelCount>
      data-testid="gpu-model-table"
      size="small"
      pagination={false}
      rowKey={(row) => `${row.vendor}/${row.model}`}
      columns={columns}
      dataSource={rows}
    />
  );
}
