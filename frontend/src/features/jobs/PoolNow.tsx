import { Typography } from 'antd';
import { useTranslation } from 'react-i18next';
import { formatInteger } from '../../lib/format';
import { currentLanguage } from '../../lib/i18n';
import { usePoolTopology } from '../cluster/api';

/**
 * Why a job of whole servers still waits, in numbers: how many GPUs stand free as whole
 * servers inside one leaf, one Scalable Unit and the pool right now, and how many free ones
 * are stranded on part-used servers (the pool's topology, counts only).
 */
export function PoolNow({ pool, model }: { pool: number; model: string | null }) {
  const { t } = useTranslation();
  const language = currentLanguage();
  const topology = usePoolTopology(pool);
  if (topology.data === undefined) return null;
  const gangs = topology.data.largest_gang.filter((g) => model === null || g.model === model);
  const best = (key: 'leaf' | 'scalable_unit' | 'pool') =>
    formatInteger(Math.max(0, ...gangs.map((g) => g[key])), language);
  return (
    <Typography.Paragraph style={{ margin: '8px 0 0' }} data-testid="pool-now">
      {t('jobDetail.poolNow', {
        leaf: best('leaf'),
        unit: best('scalable_unit'),
        pool: best('pool'),
        stranded: formatInteger(topology.data.summary.stranded, language),
      })}
    </Typography.Paragraph>
  );
}
