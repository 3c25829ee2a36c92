import { useConnectionState } from '../../lib/liveEvents';

/**
 * Poll only as the fallback for a closed socket: while it is open, the shell's events stream
 * refetches the Health queries when a pool's nodes change (`useLiveEvents`).
 */
export function useHealthPollInterval(): number {
  return useConnectionState() === 'open' ? 60_000 : 15_000;
}
