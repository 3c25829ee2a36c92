import type { TelemetryFrame } from '../../lib/apiTypes';

/**
 * The live GPU cells of one telemetry view, in typed arrays.
 *
 * A cluster has up to ~10,000 GPUs and a frame arrives every second, so cells are not kept as
 * objects: cell `i` is slot `node * gpusPerNode + gpu`, its values sit at
 * `values[i * fields.length + f]`, and every write records `i` in a dirty list so the painter
 * redraws only what changed. Frames follow docs/websockets.md (telemetry): `base == 0` is a
 * keyframe, otherwise a delta that applies only when `base` is this store's `seq` within the
 * same `epoch`; anything else is a gap and the caller must load a snapshot.
 */

export type FrameResult = 'applied' | 'gap' | 'stale';
export type Summary = Record<string, Record<string, number | undefined> | undefined>;

const hostOrder = new Intl.Collator('en', { numeric: true });

/** `gpu-07:3` -> [`gpu-07`, 3]; hostnames may themselves contain colons. */
export function splitKey(key: string): [string, number] {
  const split = key.lastIndexOf(':');
  return [key.slice(0, split), Number(key.slice(split + 1))];
}

export class HeatmapStore {
  fields: readonly string[] = [];
  nodes: string[] = [];
  gpusPerNode = 0;
  /** Slot -> values of every field; NaN where a slot holds no GPU. */
  values = new Float32Array(0);
  present = new Uint8Array(0);
  /** GPUs currently in view (present slots). */
  gpuCount = 0;
  seq = 0;
  epoch = '';
  at = 0;
  summary: Summary = {};
  /** Whether the store holds a state that deltas may build on. */
  synced = false;
  /** Bumped whenever slots move (new nodes, new keyframe): the painter redraws everything. */
  layoutVersion = 0;
  /** Bumped on every applied frame (for React's useSyncExternalStore). */
  version = 0;

  /** `host:gpu` -> slot: one lookup per streamed cell, no string splitting. */
  private slotByKey = new Map<string, number>();
  private dirtyList = new Uint32Array(0);
  private dirtyFlag = new Uint8Array(0);
  private dirtyCount = 0;
  private readonly listeners = new Set<() => void>();

  get slotCount(): number {
    return this.nodes.length * this.gpusPerNode;
  }

  subscribe(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }

  /** The slot of `host:gpu`, or -1 if it is not in view. */
  slotOf(key: string): number {
    return this.slotByKey.get(key) ?? -1;
  }

  keyOf(slot: number): string {
    const node = this.nodes[Math.floor(slot / this.gpusPerNode)] ?? '';
    return `${node}:${slot % this.gpusPerNode}`;
  }

  value(slot: number, field: number): number {
    return this.values[slot * this.fields.length + field] ?? Number.NaN;
  }

  /** Applies one frame (keyframe or delta) and tells listeners; see the class comment. */
  apply(frame: TelemetryFrame): FrameResult {
    if (frame.base === 0) {
      this.replace(frame);
    } else if (!this.synced || frame.epoch !== this.epoch || frame.base !== this.seq) {
      if (frame.epoch === this.epoch && frame.seq <= this.seq) return 'stale';
      this.synced = false;
      return 'gap';
    } else {
      this.patch(frame);
    }
    this.seq = frame.seq;
    this.epoch = frame.epoch;
    this.at = frame.at;
    this.summary = frame.data.summary as Summary;
    this.synced = true;
    this.notify();
    return 'applied';
  }

  /** The slots changed since the last call (each once); the painter consumes them. */
  takeDirty(): Uint32Array {
    const taken = this.dirtyList.slice(0, this.dirtyCount);
    for (const slot of taken) this.dirtyFlag[slot] = 0;
    this.dirtyCount = 0;
    return taken;
  }

  private notify(): void {
    this.version += 1;
    this.listeners.forEach((listener) => {
      listener();
    });
  }

  private markDirty(slot: number): void {
    if (this.dirtyFlag[slot] === 1) return;
    this.dirtyFlag[slot] = 1;
    this.dirtyList[this.dirtyCount] = slot;
    this.dirtyCount += 1;
  }

  private replace(frame: TelemetryFrame): void {
    this.fields = frame.data.fields;
    this.rebuild(new Map(Object.entries(frame.data.cells)));
  }

  private patch(frame: TelemetryFrame): void {
    const width = this.fields.length;
    const { cells, removed } = frame.data;
    for (const key of removed) {
      const slot = this.slotOf(key);
      if (slot < 0 || this.present[slot] === 0) continue;
      this.present[slot] = 0;
      this.values.fill(Number.NaN, slot * width, slot * width + width);
      this.gpuCount -= 1;
      this.markDirty(slot);
    }
    let unplaced: Map<string, number[]> | null = null;
    for (const key in cells) {
      const row = cells[key] ?? [];
      const slot = this.slotOf(key);
      if (slot < 0) {
        // A GPU on a node (or index) not laid out yet: rare, handled by a relayout below.
        unplaced ??= new Map();
        unplaced.set(key, row);
        continue;
      }
      const offset = slot * width;
      for (let f = 0; f < width; f += 1) this.values[offset + f] = row[f] ?? Number.NaN;
      if (this.present[slot] === 0) {
        this.present[slot] = 1;
        this.gpuCount += 1;
      }
      this.markDirty(slot);
    }
    if (unplaced !== null) {
      const all = this.currentCells();
      unplaced.forEach((row, key) => all.set(key, row));
      this.rebuild(all);
    }
  }

  private currentCells(): Map<string, number[]> {
    const width = this.fields.length;
    const out = new Map<string, number[]>();
    for (let slot = 0; slot < this.slotCount; slot += 1) {
      if (this.present[slot] === 1) {
        out.set(
          this.keyOf(slot),
          Array.from(this.values.subarray(slot * width, slot * width + width)),
        );
      }
    }
    return out;
  }

  /** Lays out every slot afresh from `cells` (sorted hosts, one block of GPUs per host). */
  private rebuild(cells: Map<string, number[]>): void {
    const hosts = new Set<string>();
    let gpus = 0;
    for (const key of cells.keys()) {
      const [host, gpu] = splitKey(key);
      hosts.add(host);
      gpus = Math.max(gpus, gpu + 1);
    }
    this.nodes = [...hosts].sort(hostOrder.compare);
    this.gpusPerNode = gpus;
    // Every slot gets its key (empty ones too), so a GPU that appears later on a known node
    // and index needs no relayout.
    this.slotByKey = new Map();
    this.nodes.forEach((host, node) => {
      for (let gpu = 0; gpu < gpus; gpu += 1)
        this.slotByKey.set(`${host}:${gpu}`, node * gpus + gpu);
    });
    const width = this.fields.length;
    const slots = this.slotCount;
    this.values = new Float32Array(slots * width).fill(Number.NaN);
    this.present = new Uint8Array(slots);
    this.dirtyList = new Uint32Array(slots);
    this.dirtyFlag = new Uint8Array(slots);
    this.dirtyCount = 0;
    this.gpuCount = 0;
    cells.forEach((row, key) => {
      const slot = this.slotOf(key);
      for (let f = 0; f < width; f += 1) this.values[slot * width + f] = row[f] ?? Number.NaN;
      this.present[slot] = 1;
      this.gpuCount += 1;
    });
    this.layoutVersion += 1;
  }
}
