// Query keys shared by the pages and the websocket cache writer, so both agree on them.
export const jobKeys = {
  all: (tenant: string) => ['jobs', tenant] as const,
  lists: (tenant: string) => ['jobs', tenant, 'list'] as const,
  list: (tenant: string, filters: object) => ['jobs', tenant, 'list', filters] as const,
  detail: (tenant: string, id: number) => ['jobs', tenant, 'detail', id] as const,
  events: (tenant: string, id: number) => ['jobs', tenant, 'events', id] as const,
  pipeline: (tenant: string, id: number) => ['jobs', tenant, 'pipeline', id] as const,
};

/** Every Health query (node grid, summary, node pages, incidents, alerts). */
export const healthKeys = { all: ['health'] as const };

export const poolKeys = {
  all: ['pools'] as const,
  /** Every query of one pool (its queue, its topology): what `pools.changed` refreshes. */
  one: (id: number) => ['pools', id] as const,
  queue: (id: number) => ['pools', id, 'queue'] as const,
  topology: (id: number) => ['pools', id, 'topology'] as const,
};
