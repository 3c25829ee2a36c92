import { Card, Select, Space, Table, Typography } from 'antd';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { WhatIfRun } from '../../lib/apiTypes';
import { currentLanguage } from '../../lib/i18n';
import { commonPolicies, compareRows, policyLabel, type CompareRow } from './whatIfRows';

/**
 * Finished replays side by side under one policy: the capacity, quota and load questions
 * are asked as a series of runs (+0, +4, +8 servers), and this is where they are read
 * together.
 */
export function CompareRuns({
  runs,
  poolNames,
}: {
  runs: WhatIfRun[];
  poolNames: Map<number, string>;
}) {
  const { t } = useTranslation();
  const policies = commonPolicies(runs);
  const [picked, setPicked] = useState<string | null>(null);
  const policy = picked && policies.includes(picked) ? picked : (policies[0] ?? null);
  const rows = policy ? compareRows(t, runs, policy, currentLanguage(), poolNames) : [];
  return (
    <Card
      title={t('whatif.compareTitle')}
      data-testid="whatif-compare"
      extra={
        <Space>
          <Typography.Text>{t('whatif.comparePolicy')}</Typography.Text>
          <Select
            aria-label={t('whatif.comparePolicy')}
            value={policy}
            onChange={setPicked}
            style={{ width: 180 }}
            options={policies.map((p) => ({ value: p, label: policyLabel(t, p) }))}
          />
        </Space>
      }
    >
      <Table<CompareRow>
        size="small"
        pagination={false}
        rowKey="key"
        dataSource={rows}
        columns={[
          { title: t('whatif.measure'), dataIndex: 'measure', width: 260 },
          ...runs.map((run, i) => ({
            title: `#${run.id}`,
            key: String(run.id),
            render: (_: unknown, row: CompareRow) => row.cells[i],
          })),
        ]}
      />
      <Typography.Paragraph type="secondary" style={{ marginTop: 12, marginBottom: 0 }}>
        {t('whatif.compareNote')}
      </Typography.Paragraph>
    </Card>
  );
}
