import i18n from 'i18next';
import { describe, expect, it } from 'vitest';
import { setLanguage } from '../../lib/i18n';
import { schedulerText } from './schedulerText';

// As apps/scheduling/core/text.py sends them (tests/scheduling_core/test_text.py renders the
// same shapes back to the server's English).
const TOPOLOGY = [
  {
    key: 'topologyShort',
    args: {
      shape: { key: 'shapeReplicas', args: { need: 32, model: 'A800', replicas: 4, k: 8 } },
      tier: { key: 'tierLeaf', args: {} },
      block: 16,
    },
  },
  { key: 'softTopologyWait', args: {} },
];
const TOPOLOGY_EN =
  'needs 32 A800 (4 x 8) under one leaf switch; largest free block under one leaf switch is ' +
  '16; soft topology: it waits for that within its topology patience (or while nodes held ' +
  'for it drain), then takes any placement';

const GANG_OFF = [
  {
    key: 'gangOff',
    args: {
      placed: 1,
      total: 3,
      rest: [
        {
          key: 'heldShort',
          args: {
            shape: { key: 'shapeTotal', args: { need: 16, model: 'H100' } },
            held: 8,
            model: 'H100',
            jobs: { items: ['7', '9'] },
          },
        },
      ],
    },
  },
  { key: 'heldUntil', args: { nodes: 2, until: { time: '2026-12-06T03:00:00Z' } } },
];

describe('pending reasons', () => {
  it('reads in English as the server wrote it', () => {
    expect(schedulerText(i18n.t, 'en', TOPOLOGY, 'as sent')).toBe(TOPOLOGY_EN);
  });

  it('says the same in Chinese, phrases inside phrases and the tier translated', async () => {
    await setLanguage('zh');
    expect(schedulerText(i18n.t, 'zh', TOPOLOGY, TOPOLOGY_EN)).toBe(
      '需要在同一叶交换机下有 32 张 A800（4 × 8）；同一叶交换机下最大的空闲块为 16；' +
        '软拓扑：在拓扑等待期内（或为它保留的节点腾空期间）继续等待，之后接受任意放置',
    );
  });

  it('joins clauses and lists the reader’s way and writes moments in their time', async () => {
    await setLanguage('zh');
    const said = schedulerText(i18n.t, 'zh', GANG_OFF, 'as sent');
    expect(said).toMatch(
      /^未启用成组调度：已放置 1\/3 个副本；其余：需要 16 张 H100；空闲的 H100 中有 8 张为等待过久的作业 7、9 保留；已为它保留 2 个节点，直到 2026/,
    );
    expect(said).not.toContain('T03:00:00');
  });

  it('falls back to the server’s English for anything it cannot say whole', async () => {
    await setLanguage('zh');
    const unknown = [{ key: 'fromANewerServer', args: {} }];
    expect(schedulerText(i18n.t, 'zh', unknown, 'english')).toBe('english');
    const missing = [{ key: 'noQuota', args: { tenant: 't', model: 'A800' } }];
    expect(schedulerText(i18n.t, 'zh', missing, 'english')).toBe('english');
    const nested = [{ key: 'gangOff', args: { placed: 1, total: 2, rest: [{ key: 'nope' }] } }];
    expect(schedulerText(i18n.t, 'zh', nested, 'english')).toBe('english');
    expect(schedulerText(i18n.t, 'zh', [], 'english')).toBe('english');
    expect(schedulerText(i18n.t, 'zh', undefined, 'english')).toBe('english');
  });
});
