import { describe, expect, it } from 'vitest';
import { edgePath, layoutPipeline, type PipelineNode } from './pipelineLayout';

// Box 200 x 64, 56 between columns, 16 between rows: a column is 256 px on, a row 80 px down.
const job = (id: number, after: number[] = []): PipelineNode => ({ id, after });

function grid(jobs: PipelineNode[]) {
  return layoutPipeline(jobs).nodes.map((n) => [n.id, n.column, n.row]);
}

function arrows(jobs: PipelineNode[]) {
  return layoutPipeline(jobs).edges.map((e) => `${e.from}>${e.to}`);
}

describe('layoutPipeline', () => {
  it('lays a chain out in one row, one column a step', () => {
    const chain = [job(1), job(2, [1]), job(3, [2])];
    const layout = layoutPipeline(chain);
    expect(layout.nodes).toEqual([
      { id: 1, column: 0, row: 0, x: 0, y: 0 },
      { id: 2, column: 1, row: 0, x: 256, y: 0 },
      { id: 3, column: 2, row: 0, x: 512, y: 0 },
    ]);
    expect(layout.edges).toEqual([
      { from: 1, to: 2, x1: 200, y1: 32, x2: 256, y2: 32 },
      { from: 2, to: 3, x1: 456, y1: 32, x2: 512, y2: 32 },
    ]);
    expect([layout.width, layout.height]).toEqual([712, 64]);
  });

  it('puts a job after the longest path to it, not the shortest', () => {
    const jobs = [job(1), job(2, [1]), job(3, [1, 2])];
    expect(grid(jobs)).toEqual([
      [1, 0, 0],
      [2, 1, 0],
      [3, 2, 0],
    ]);
    expect(arrows(jobs)).toEqual(['1>2', '1>3', '2>3']);
  });

  it('draws a diamond with its ends centred on the two middle jobs', () => {
    const layout = layoutPipeline([job(1), job(2, [1]), job(3, [1]), job(4, [2, 3])]);
    expect(layout.nodes.map((n) => [n.id, n.column, n.row, n.x, n.y])).toEqual([
      [1, 0, 0, 0, 40],
      [2, 1, 0, 256, 0],
      [3, 1, 1, 256, 80],
      [4, 2, 0, 512, 40],
    ]);
    expect(layout.edges.map((e) => `${e.from}>${e.to}`)).toEqual(['1>2', '1>3', '2>4', '3>4']);
    expect([layout.width, layout.height]).toEqual([712, 144]);
  });

  it('orders a column by the rows of what it starts after, so two chains do not cross', () => {
    // By id, 3 would sit above 4 and the arrows 2>3 and 1>4 would cross.
    const jobs = [job(1), job(2), job(3, [2]), job(4, [1])];
    expect(grid(jobs)).toEqual([
      [1, 0, 0],
      [2, 0, 1],
      [3, 1, 1],
      [4, 1, 0],
    ]);
    expect(arrows(jobs)).toEqual(['2>3', '1>4']);
  });

  it('breaks ties by id', () => {
    expect(grid([job(7), job(9, [7]), job(8, [7])])).toEqual([
      [7, 0, 0],
      [9, 1, 1],
      [8, 1, 0],
    ]);
  });

  it('takes a job whose predecessor is not in the answer as a root', () => {
    // Job 5 starts after job 3, which the answer left out (truncated).
    const jobs = [job(5, [3]), job(6, [5])];
    expect(grid(jobs)).toEqual([
      [5, 0, 0],
      [6, 1, 0],
    ]);
    expect(arrows(jobs)).toEqual(['5>6']);
  });

  it('draws nothing for no jobs and one box for a job on its own', () => {
    expect(layoutPipeline([])).toEqual({ nodes: [], edges: [], width: 0, height: 0 });
    expect(layoutPipeline([job(1)])).toMatchObject({ width: 200, height: 64, edges: [] });
  });

  it('does not loop on a cycle', () => {
    expect(layoutPipeline([job(1, [2]), job(2, [1])]).nodes).toHaveLength(2);
  });

  it('draws an arrow to the next column as an S-curve, and bows one that skips a column', () => {
    const { edges } = layoutPipeline([job(1), job(2, [1]), job(3, [1, 2])]);
    expect(edges.map(edgePath)).toEqual([
      'M200,32 C228,32 228,32 256,32',
      'M200,32 C356,-24 356,-24 512,32',
      'M456,32 C484,32 484,32 512,32',
    ]);
  });
});
