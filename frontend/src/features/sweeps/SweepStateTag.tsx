import { Tag } from 'antd';
import { useTranslation } from 'react-i18next';
import type { SweepState } from '../../lib/apiTypes';

const COLORS: Record<SweepState, string> = {
  running: 'processing',
  finished: 'success',
  cancelled: 'default',
  stopped: 'warning',
};

export function SweepStateTag({ state }: { state: SweepState }) {
  const { t } = useTranslation();
  return (
    <Tag color={COLORS[state]} data-testid="sweep-state" data-state={state}>
      {t(`sweeps.state.${state}`)}
    </Tag>
  );
}
