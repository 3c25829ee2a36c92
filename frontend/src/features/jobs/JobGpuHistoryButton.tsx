import { LineChartOutlined } from '@ant-design/icons';
import { Button, Modal } from 'antd';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { Allocation } from '../../lib/apiTypes';
import { GpuHistoryCard } from '../telemetry/GpuHistoryCard';

/** The GPUs a replica holds on its node: whole devices, or the ones it has a share of. */
function gpusOf(allocation: Allocation): number[] {
  // Both are JSON lists: device indices, and [device, milli] pairs.
  const indices = (value: unknown): number[] =>
    Array.isArray(value)
      ? value.map((v: unknown) => Number(Array.isArray(v) ? v[0] : v)).filter(Number.isInteger)
      : [];
  const all = [...indices(allocation.devices), ...indices(allocation.shares)];
  return [...new Set(all)].sort((a, b) => a - b);
}

/**
 * One replica's GPUs over time (utilization, memory, power, temperature, SM activity), for
 * anyone who may see the job: its tenant's members read the GPUs their job holds, from when
 * it got them (the server's rule), so a straggler or a hot GPU shows without an operator.
 */
export function JobGpuHistoryButton({ allocation }: { allocation: Allocation }) {
  const { t } = useTranslation();
  const gpus = gpusOf(allocation);
  const [gpu, setGpu] = useState<number | null>(null);
  if (gpus.length === 0) return null;
  return (
    <>
      <Button
        size="small"
        type="link"
        icon={<LineChartOutlined />}
        aria-label={t('jobDetail.gpuHistoryOf', { node: allocation.node })}
        onClick={() => {
          setGpu(gpus[0] ?? 0);
        }}
      />
      {gpu !== null && (
        <Modal
          open
          width={880}
          footer={null}
          title={t('jobDetail.gpuHistoryOf', { node: allocation.node })}
          onCancel={() => {
            setGpu(null);
          }}
        >
          <GpuHistoryCard
            node={allocation.node}
            gpuCount={0}
            gpus={gpus}
            gpu={gpu}
            onGpuChange={setGpu}
            testId="job-gpu-history"
          />
        </Modal>
      )}
    </>
  );
}
