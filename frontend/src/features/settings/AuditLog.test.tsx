import { fireEvent, screen, within } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import { setLanguage } from '../../lib/i18n';
import { stubFetch } from '../../test/fetchStub';
import { page, sessionOf } from '../../test/fixtures';
import { ALICE, renderApp } from '../../test/renderApp';

const entry = (id: number, object_type: string, object_repr: string) => ({
  id,
  tenant: 'vision',
  actor_name: 'alice',
  action: 'update',
  object_type,
  object_id: String(id),
  object_repr,
  before: {},
  after: {},
  created_at: '2026-12-01T08:00:00Z',
});

describe('settings: audit log object types', () => {
  afterEach(async () => {
    await setLanguage('en');
  });

  it('names known object types in the reader’s language and shows others as sent', async () => {
    await setLanguage('zh');
    stubFetch({
      'GET /api/v1/auth/session/': sessionOf(ALICE),
      'GET /api/v1/tokens/': page([]),
      'GET /api/v1/tenants/vision/audit/': page([
        entry(1, 'tenancy.membership', 'bob in vision as member'),
        entry(2, 'governance.idlepolicy', 'idle policy vision'),
        entry(3, 'future.thing', 'thing'),
      ]),
    });
    renderApp('/settings');
    fireEvent.click(await screen.findByRole('tab', { name: '审计日志' }));
    const table = await screen.findByTestId('audit-table');
    await within(table).findByText('bob in vision as member');
    expect(within(table).getByText('成员').getAttribute('title')).toBe('tenancy.membership');
    expect(within(table).getByText('空闲策略')).toBeTruthy();
    expect(within(table).getByText('future.thing')).toBeTruthy();
    expect(within(table).queryByText('governance.idlepolicy')).toBeNull();
  });
});
