import { Tag } from 'antd';
import { useTranslation } from 'react-i18next';
import type { WhatIfRun } from '../lib/apiTypes';

/** The states of work a worker runs for an operator: what-if replays, slow-node probes. */
export type WorkerRunState = WhatIfRun['state'];

const COLORS: Record<WorkerRunState, string> = {
  pending: 'default',
  running: 'processing',
  done: 'success',
  failed: 'error',
};

export function WorkerRunStateTag({ state }: { state: WorkerRunState }) {
  const { t } = useTranslation();
  return <Tag color={COLORS[state]}>{t(`workerRunState.${state}`)}</Tag>;
}
