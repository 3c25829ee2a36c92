import { Badge, Tooltip } from 'antd';
import { useTranslation } from 'react-i18next';
import type { ConnectionState } from '../lib/events';
import { useConnectionState } from '../lib/liveEvents';

const STATUS: Record<ConnectionState, 'success' | 'processing' | 'warning' | 'default'> = {
  open: 'success',
  connecting: 'processing',
  reconnecting: 'warning',
  idle: 'default',
};

/** The live-update socket's state, in the header: users should know when pages may be stale. */
export function ConnectionIndicator() {
  const { t } = useTranslation();
  const state = useConnectionState();
  return (
    <Tooltip title={t(`connection.${state}Hint`)}>
      <span data-testid="connection-indicator" data-state={state} role="status">
        <Badge status={STATUS[state]} text={t(`connection.${state}`)} />
      </span>
    </Tooltip>
  );
}
