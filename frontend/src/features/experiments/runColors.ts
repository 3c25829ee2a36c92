/** One colour per compared run, in run order: the curves and the parallel-coordinates chart
 * share it, so a run has the same colour in both. */
export const RUN_COLORS = [
  '#2f6fed',
  '#e8684a',
  '#2ca58d',
  '#9b59b6',
  '#f2a900',
  '#17a2b8',
  '#d6336c',
  '#6c757d',
];
