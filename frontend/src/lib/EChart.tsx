import type { EChartsCoreOption } from 'echarts/core';
import { useEChart } from './useEChart';

interface Props {
  option: EChartsCoreOption;
  /** Accessible description of what the chart shows. */
  label: string;
  testId: string;
  height: number;
  renderer?: 'canvas' | 'svg';
}

/**
 * The element every chart draws into: full width, a fixed height, and exposed to assistive
 * technology as one image with a description. Callers register their chart parts themselves.
 */
export function EChart({ option, label, testId, height, renderer = 'canvas' }: Props) {
  const container = useEChart(option, renderer);
  return (
    <div
      ref={container}
      role="img"
      aria-label={label}
      data-testid={testId}
      style={{ width: '100%', height }}
    />
  );
}
