import i18n from 'i18next';
import { describe, expect, it } from 'vitest';
import { setLanguage } from '../../lib/i18n';
import { noteText, schedulerText, sentencesText } from './schedulerText';

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

// Notes as apps/jobs/notes.py stores them on events and notices: values, nested notes, and
// what the scheduler said (its phrases) as arguments.
const EXPIRED = {
  key: 'queueExpired',
  args: {
    waited: { seconds: 7200 },
    limit: '2 h 00 min', // as events stored it before durations were values
    blocking: [{ key: 'noQuota', args: { tenant: 'cv', model: 'A800', pool: 'p1' } }],
  },
};
const STOPPED_BODY = [
  { key: 'noticeIdleStoppedBody', args: { name: 'resnet', job: 11, gpus: '8' } },
  {
    key: 'noticeCheckpoint',
    args: {
      checkpoint: {
        key: 'checkpointNotAsked',
        args: { where: { key: 'checkpointAt', args: { step: 400, location: 's3://ckpt/400' } } },
      },
    },
  },
];

describe('notes', () => {
  it('say nested notes and the scheduler’s phrases inside an event’s note', async () => {
    expect(noteText(i18n.t, 'en', EXPIRED, 'as sent')).toMatch(
      /^expired in queue \(waited 2 h, limit 2 h 00 min: .*A800.*\)$/,
    );
    await setLanguage('zh');
    const said = noteText(i18n.t, 'zh', EXPIRED, 'as sent');
    expect(said).toMatch(/^排队超时（已等待 2小时，上限 2 h 00 min：.*A800.*）$/);
    expect(said.replace('2 h 00 min', '')).not.toMatch(/[a-z]{3,}/); // no English but names
    expect(noteText(i18n.t, 'zh', { key: 'placed', args: { nodes: 2, tier: 'leaf' } }, '')).toBe(
      '已放置到 2 个节点，拓扑层级：叶交换机',
    );
  });

  it('join a notice’s sentences the reader’s way', async () => {
    expect(sentencesText(i18n.t, 'en', STOPPED_BODY, 'as sent')).toBe(
      'Job resnet (#11) was stopped: its GPUs stayed idle through the grace period. 8 GPU(s) ' +
        'went back to the pool. Checkpoint: no checkpoint requested; newest complete ' +
        'checkpoint: step 400 at s3://ckpt/400.',
    );
    await setLanguage('zh');
    expect(sentencesText(i18n.t, 'zh', STOPPED_BODY, 'as sent')).toBe(
      '作业 resnet（#11）已停止：宽限期内 GPU 一直空闲。8 张 GPU 已归还资源池。' +
        '检查点：未请求检查点；最新的完整检查点：第 400 步，位于 s3://ckpt/400。',
    );
  });

  it('fall back to the English when a nested note or an argument is unknown', async () => {
    await setLanguage('zh');
    const nested = { key: 'noticeCheckpoint', args: { checkpoint: { key: 'nope', args: {} } } };
    expect(noteText(i18n.t, 'zh', nested, 'english')).toBe('english');
    expect(noteText(i18n.t, 'zh', { key: 'placed', args: { nodes: 2 } }, 'english')).toBe(
      'english',
    );
    expect(sentencesText(i18n.t, 'zh', [...STOPPED_BODY, { key: 'nope' }], 'english')).toBe(
      'english',
    );
  });
});
