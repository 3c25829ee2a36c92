import { theme } from 'antd';
import { useId, useMemo, type ReactNode } from 'react';
import { edgePath, layoutPipeline, type PipelineNode, type PlacedNode } from './pipelineLayout';

/**
 * A pipeline drawn left to right (layoutPipeline): an arrow from each node to those that start
 * after it, and each node's box as `renderNode` draws it (place it with boxFrame). Used by
 * the job page (the jobs of a pipeline) and the pipeline submit page (the steps of a file).
 */
export function PipelineDiagram({
  nodes,
  label,
  renderNode,
  testId = 'pipeline-graph',
}: {
  nodes: readonly PipelineNode[];
  label: string;
  renderNode: (node: PlacedNode) => ReactNode;
  testId?: string;
}) {
  const { token } = theme.useToken();
  const arrow = useId();
  const layout = useMemo(() => layoutPipeline(nodes), [nodes]);
  return (
    // Room above for arrows that bow over a column (edgePath).
    <div style={{ overflowX: 'auto', padding: '12px 0 8px' }}>
      <div
        role="group"
        aria-label={label}
        data-testid={testId}
        style={{ position: 'relative', width: layout.width, height: layout.height }}
      >
        <svg
          width={layout.width}
          height={layout.height}
          aria-hidden
          style={{ position: 'absolute', inset: 0, overflow: 'visible' }}
        >
          <defs>
            <marker
              id={arrow}
              viewBox="0 0 10 10"
              refX={10}
              refY={5}
              markerWidth={8}
              markerHeight={8}
              orient="auto"
            >
              <path d="M0,0 L10,5 L0,10 z" fill={token.colorTextTertiary} />
            </marker>
          </defs>
          {layout.edges.map((edge) => (
            <path
              key={`${edge.from}-${edge.to}`}
              d={edgePath(edge)}
              fill="none"
              stroke={token.colorTextTertiary}
              strokeWidth={1.5}
              markerEnd={`url(#${arrow})`}
              data-testid="pipeline-edge"
              data-from={edge.from}
              data-to={edge.to}
            />
          ))}
        </svg>
        {layout.nodes.map(renderNode)}
      </div>
    </div>
  );
}
