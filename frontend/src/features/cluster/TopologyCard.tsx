import { Card, Col, Empty, Flex, Row, Select, Skeleton, Statistic, Tag, Typography } from 'antd';
import { useTranslation } from 'react-i18next';
import { useSearchParams } from 'react-router';
import { QueryErrorResult } from '../../components/QueryErrorResult';
import type { PoolTopology, TopologyCounts, TopologyLeaf, TopologyNode } from '../../lib/apiTypes';
import { formatInteger, formatShare } from '../../lib/format';
import { currentLanguage } from '../../lib/i18n';
import { usePools } from '../jobs/api';
import { usePoolTopology } from './api';
import styles from './TopologyCard.module.css';

type NodeState = TopologyNode['state'];

const NODE_COLORS: Record<NodeState, string> = {
  free: '#52c41a',
  partial: '#faad14',
  full: '#1677ff',
  unavailable: '#ff4d4f',
  spare: '#bfbfbf',
};
const STATES = Object.keys(NODE_COLORS) as NodeState[];

/**
 * Where a large job can start: the pool's spine -> Scalable Unit -> leaf tree with one square
 * per node, wholly free nodes and stranded GPUs per domain, the largest whole-node gang that
 * could start now, and the queue by pending reason. Live: refetched when the events socket
 * says the pool changed (`usePoolTopology`).
 */
export function TopologyCard() {
  const { t } = useTranslation();
  const pools = usePools();
  // The pool shown is in the address (?pool=<id>), so a pool's row elsewhere can link here.
  const [params, setParams] = useSearchParams();
  const chosen = Number(params.get('pool')) || null;
  const withDevices = (pools.data ?? []).filter((p) => p.capacity.some((c) => c.devices > 0));
  const poolId = chosen ?? withDevices[0]?.id ?? pools.data?.[0]?.id ?? null;
  const topology = usePoolTopology(poolId);
  return (
    <Card
      title={t('cluster.topology')}
      data-testid="cluster-topology"
      extra={
        (pools.data?.length ?? 0) > 1 && (
          <Select
            aria-label={t('cluster.pool')}
            size="small"
            style={{ minWidth: 180 }}
            value={poolId ?? undefined}
            onChange={(id: number) => {
              setParams(
                (next) => {
                  next.set('pool', String(id));
                  return next;
                },
                { replace: true },
              );
            }}
            options={(pools.data ?? []).map((p) => ({ value: p.id, label: p.name }))}
          />
        )
      }
    >
      {pools.isError ? (
        <QueryErrorResult error={pools.error} onRetry={() => void pools.refetch()} />
      ) : topology.isError ? (
        <QueryErrorResult error={topology.error} onRetry={() => void topology.refetch()} />
      ) : pools.data !== undefined && poolId === null ? (
        <Empty description={t('cluster.noPools')} />
      ) : topology.data === undefined ? (
        <Skeleton active />
      ) : (
        <Topology data={topology.data} />
      )}
    </Card>
  );
}

function Topology({ data }: { data: PoolTopology }) {
  const { t } = useTranslation();
  const language = currentLanguage();
  const n = (v: number) => formatInteger(v, language);
  const s = data.summary;
  if (s.nodes === 0 && s.spare_nodes === 0) return <Empty description={t('cluster.noNodes')} />;
  const stats: [string, string, string][] = [
    ['free', t('cluster.topo_free'), `${n(s.free)} / ${n(s.devices)}`],
    ['whole', t('cluster.topo_whole'), n(s.whole_free_nodes)],
    [
      'stranded',
      t('cluster.topo_stranded', { size: data.replica_size }),
      `${n(s.stranded)} (${formatShare(s.stranded, s.free, language)})`,
    ],
    ['unavailable', t('cluster.topo_unavailable'), n(s.unavailable)],
  ];
  return (
    <Flex vertical gap={16}>
      <Row gutter={[16, 16]}>
        {stats.map(([id, title, value]) => (
          <Col xs={12} md={6} key={id}>
            <Statistic title={title} value={value} data-testid={`topology-${id}`} />
          </Col>
        ))}
      </Row>
      <div data-testid="topology-largest">
        <Typography.Text strong>{t('cluster.topo_largest')}</Typography.Text>{' '}
        {data.largest_gang.map((g) => (
          <Typography.Text key={g.model} style={{ marginRight: 16 }}>
            {t('cluster.topo_largestOf', {
              model: g.model,
              leaf: n(g.leaf),
              unit: n(g.scalable_unit),
              pool: n(g.pool),
            })}
          </Typography.Text>
        ))}
      </div>
      <div data-testid="topology-queue">
        <Typography.Text strong>
          {t('cluster.topo_queue', { jobs: n(data.queue.jobs), gpus: n(data.queue.devices) })}
        </Typography.Text>
        {data.queue.by_code.length > 0 && (
          <Typography.Text type="secondary"> {t('cluster.topo_waitingOn')} </Typography.Text>
        )}
        {data.queue.by_code.map((c) => (
          <Tag key={c.code || 'none'}>
            {t(`cluster.pending_${c.code || 'none'}`, { defaultValue: c.code })}: {n(c.jobs)}
          </Tag>
        ))}
      </div>
      <Legend />
      {data.spines.map((spine) => (
        <Flex vertical gap={12} key={spine.name}>
          {data.spines.length > 1 && (
            <Typography.Title level={5} style={{ margin: 0 }}>
              {t('cluster.topo_spine', { name: spine.name || '—' })}
            </Typography.Title>
          )}
          {spine.units.map((unit) => (
            <Card
              key={unit.name}
              size="small"
              type="inner"
              title={t('cluster.topo_unit', { name: unit.name || '—' })}
              extra={<DomainCounts counts={unit.summary} />}
              data-testid={`topology-unit-${unit.name}`}
            >
              <Flex vertical gap={6}>
                {unit.leaves.map((leaf) => (
                  <LeafRow key={leaf.name} leaf={leaf} />
                ))}
              </Flex>
            </Card>
          ))}
        </Flex>
      ))}
    </Flex>
  );
}

function DomainCounts({ counts }: { counts: TopologyCounts }) {
  const { t } = useTranslation();
  const language = currentLanguage();
  return (
    <Typography.Text type="secondary" className={styles.counts}>
      {t('cluster.topo_domain', {
        free: formatInteger(counts.free, language),
        devices: formatInteger(counts.devices, language),
        whole: formatInteger(counts.whole_free_nodes, language),
        stranded: formatInteger(counts.stranded, language),
      })}
    </Typography.Text>
  );
}

function LeafRow({ leaf }: { leaf: TopologyLeaf }) {
  const { t } = useTranslation();
  return (
    <div className={styles.leaf} data-testid={`topology-leaf-${leaf.name}`}>
      <div className={styles.leafHead}>
        <Typography.Text strong>
          {t('cluster.topo_leaf', { name: leaf.name || '—' })}
        </Typography.Text>
        <DomainCounts counts={leaf.summary} />
      </div>
      <div className={styles.nodes}>
        {leaf.nodes.map((node) => (
          <NodeCell key={node.id} node={node} />
        ))}
      </div>
    </div>
  );
}

function NodeCell({ node }: { node: TopologyNode }) {
  const { t } = useTranslation();
  const label = [
    node.name,
    node.model,
    t(`cluster.node_${node.state}`),
    t('cluster.topo_nodeCounts', { used: node.used, free: node.free, devices: node.devices }),
    node.broken > 0 ? t('cluster.topo_broken', { count: node.broken }) : null,
    node.cordoned ? t('cluster.topo_cordoned') : null,
    node.health !== 'healthy' ? node.health : null,
    node.held ? t('cluster.topo_held') : null,
  ]
    .filter((part) => part !== null)
    .join(' · ');
  return (
    <span
      role="img"
      aria-label={label}
      title={label}
      data-state={node.state}
      className={node.held ? `${styles.node} ${styles.held}` : styles.node}
      style={{ background: NODE_COLORS[node.state] }}
    />
  );
}

function Legend() {
  const { t } = useTranslation();
  return (
    <Flex wrap gap={12} className={styles.legend}>
      {STATES.map((state) => (
        <span key={state} className={styles.legendItem}>
          <span className={styles.node} style={{ background: NODE_COLORS[state] }} />
          {t(`cluster.node_${state}`)}
        </span>
      ))}
      <span className={styles.legendItem}>
        <span className={`${styles.node} ${styles.held}`} style={{ background: 'transparent' }} />
        {t('cluster.topo_held')}
      </span>
    </Flex>
  );
}
