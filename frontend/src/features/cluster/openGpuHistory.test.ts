import { describe, expect, it } from 'vitest';
import { stubFetch } from '../../test/fetchStub';
import { nodeIdByName } from './openGpuHistory';

const row = (id: number, name: string) => ({ id, name });

describe('nodeIdByName', () => {
  it('finds the exact name among the substring matches, a page further if need be', async () => {
    const next = 'http://testserver/api/v1/health/nodes/?cursor=bjI%3D&name=gpu-1&page_size=20';
    const { requests } = stubFetch({
      'GET /api/v1/health/nodes/': [
        {
          status: 200,
          body: { next, previous: null, results: [row(5, 'a-gpu-1'), row(6, 'a-gpu-10')] },
        },
        {
          status: 200,
          body: { next: null, previous: null, results: [row(9, 'gpu-1'), row(10, 'gpu-10')] },
        },
      ],
    });
    expect(await nodeIdByName('gpu-1')).toBe(9);
    expect(requests.map((r) => new URLSearchParams(r.query).get('cursor'))).toEqual([null, 'bjI=']);
    expect(new URLSearchParams(requests[0]?.query).get('name')).toBe('gpu-1');
  });

  it('answers null when no node has the name', async () => {
    stubFetch({
      'GET /api/v1/health/nodes/': {
        status: 200,
        body: { next: null, previous: null, results: [row(10, 'gpu-10')] },
      },
    });
    expect(await nodeIdByName('gpu-1')).toBeNull();
  });
});
