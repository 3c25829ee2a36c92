import { Button, Popconfirm } from 'antd';
import type { CSSProperties } from 'react';
import { useTranslation } from 'react-i18next';
import type { NodeHealth } from '../../lib/apiTypes';
import { useCordon, useDrain, useSpare } from './nodeActions';

const COMPACT_STYLE: CSSProperties = { paddingInline: 0, fontSize: 12 };

/**
 * Cordon/Uncordon, Drain and Make spare/Back to pool for one node: small links in a grid
 * cell (`compact`), ordinary buttons on the node's page. Drain comes before Make spare
 * because the server refuses a spare that still runs jobs.
 */
export function NodeActionButtons({ node, compact }: { node: NodeHealth; compact: boolean }) {
  const { t } = useTranslation();
  const cordon = useCordon();
  const spare = useSpare();
  const drain = useDrain();
  const look = compact
    ? ({ size: 'small', type: 'link', style: COMPACT_STYLE } as const)
    : ({ size: 'middle', type: 'default' } as const);
  return (
    <>
      {node.cordoned ? (
        <Button
          {...look}
          loading={cordon.isPending}
          onClick={() => {
            cordon.mutate({ node, cordon: false });
          }}
          data-testid={`uncordon-${node.name}`}
        >
          {t('health.uncordon')}
        </Button>
      ) : (
        <Popconfirm
          title={t('health.cordonConfirm', { node: node.name })}
          okText={t('health.cordon')}
          okButtonProps={{ danger: true }}
          onConfirm={() => {
            cordon.mutate({ node, cordon: true });
          }}
        >
          <Button {...look} loading={cordon.isPending} data-testid={`cordon-${node.name}`}>
            {t('health.cordon')}
          </Button>
        </Popconfirm>
      )}{' '}
      <Popconfirm
        title={t('health.drainConfirm', { node: node.name })}
        okText={t('health.drain')}
        okButtonProps={{ danger: true }}
        onConfirm={() => {
          drain.mutate(node);
        }}
      >
        <Button {...look} loading={drain.isPending} data-testid={`drain-${node.name}`}>
          {t('health.drain')}
        </Button>
      </Popconfirm>{' '}
      <Button
        {...look}
        loading={spare.isPending}
        onClick={() => {
          spare.mutate({ node, spare: !node.is_spare });
        }}
        data-testid={`spare-${node.name}`}
      >
        {t(node.is_spare ? 'health.unspare' : 'health.makeSpare')}
      </Button>
    </>
  );
}
