import { useQueryClient } from '@tanstack/react-query';
import { App } from 'antd';
import { useCallback } from 'react';
import { useTranslation } from 'react-i18next';
import { useNavigate } from 'react-router';
import { api, ApiError, unwrap } from '../../lib/api';
import { cursorOf } from '../../lib/cursorPages';

/** Rows per page of the name search: the exact name sorts before longer names holding it. */
const LOOKUP_PAGE = 20;
const LOOKUP_PAGES = 5;

/**
 * The id of the node named `name` (the node page is addressed by id; telemetry knows hosts
 * by name), or null if none is registered. The list's name filter matches substrings in
 * name order, so the exact name is nearly always on the first page; a few more are read
 * before giving up. Where two clusters reuse a name, the first (lowest id) is taken.
 */
export async function nodeIdByName(name: string, signal?: AbortSignal): Promise<number | null> {
  let cursor: string | undefined;
  for (let page = 0; page < LOOKUP_PAGES; page += 1) {
    const answer = await unwrap(
      api.GET('/api/v1/health/nodes/', {
        params: { query: { name, page_size: LOOKUP_PAGE, cursor } },
        signal,
      }),
    );
    const hit = answer.results.find((n) => n.name === name);
    if (hit !== undefined) return hit.id;
    cursor = cursorOf(answer.next);
    if (cursor === undefined) return null;
  }
  return null;
}

/**
 * Opens one GPU's history: the node's page with `?gpu=<index>`, for the heatmap's cells
 * (platform admins: the node pages are theirs). The name is looked up once per node and
 * kept, so clicking around one node's GPUs asks nothing more.
 */
export function useOpenGpuHistory(): (node: string, gpu: number) => void {
  const { t } = useTranslation();
  const client = useQueryClient();
  const navigate = useNavigate();
  const { message } = App.useApp();
  return useCallback(
    (node: string, gpu: number) => {
      client
        .query({
          queryKey: ['health', 'nodes', 'by-name', node],
          queryFn: ({ signal }) => nodeIdByName(node, signal),
          staleTime: 5 * 60_000,
        })
        .then(
          (id) => {
            if (id === null) void message.warning(t('cluster.nodeNotFound', { node }));
            else void navigate(`/health/nodes/${id}?gpu=${gpu}`);
          },
          (error: unknown) => {
            void message.error(error instanceof ApiError ? error.summary : t('errors.network'));
          },
        );
    },
    [client, navigate, message, t],
  );
}
