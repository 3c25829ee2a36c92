import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { setLanguage } from '../../lib/i18n';
import { stubFetch } from '../../test/fetchStub';
import { BOB, page, sessionOf } from '../../test/fixtures';
import { renderApp } from '../../test/renderApp';

const PROFILE = {
  username: 'bob',
  display_name: 'Bob',
  email: 'bob@vision.example',
  language: '',
};

async function openProfile() {
  renderApp('/settings');
  fireEvent.click(await screen.findByRole('tab', { name: 'Profile' }));
  return screen.findByLabelText('Email');
}

describe('profile', () => {
  it('saves a new email address and says a refused one at its field', async () => {
    const { requests } = stubFetch({
      'GET /api/v1/auth/session/': sessionOf(BOB),
      'GET /api/v1/tokens/': page([]),
      'PATCH /api/v1/auth/profile/': [
        {
          status: 400,
          body: { detail: 'Invalid input.', errors: { email: ['Enter a valid email address.'] } },
        },
        { status: 200, body: { ...PROFILE, email: 'bob@lab.example' } },
      ],
    });
    const email = await openProfile();
    expect((email as HTMLInputElement).value).toBe('bob@vision.example');
    expect(screen.getByText('Signed in as bob. Roles and platform rights are set by admins.'));

    // Not an address at all: the form says so and sends nothing.
    fireEvent.change(email, { target: { value: 'bob@' } });
    fireEvent.click(screen.getByRole('button', { name: 'Save profile' }));
    expect(await screen.findByText('Enter an email address.')).toBeTruthy();
    expect(requests.filter((r) => r.method === 'PATCH')).toEqual([]);

    // What the server refuses is said at the field too.
    fireEvent.change(email, { target: { value: 'bob@example.invalid' } });
    fireEvent.click(screen.getByRole('button', { name: 'Save profile' }));
    expect(await screen.findByText('Enter a valid email address.')).toBeTruthy();

    fireEvent.change(email, { target: { value: 'bob@lab.example' } });
    fireEvent.click(screen.getByRole('button', { name: 'Save profile' }));
    expect(await screen.findByText('Profile saved.')).toBeTruthy();
    const patches = requests.filter((r) => r.method === 'PATCH').map((r) => r.body);
    expect(patches).toEqual([
      { display_name: 'Bob', email: 'bob@example.invalid' },
      { display_name: 'Bob', email: 'bob@lab.example' },
    ]);
  });

  it('changes the password: the two new ones must match, the server judges the rest', async () => {
    const { requests } = stubFetch({
      'GET /api/v1/auth/session/': sessionOf(BOB),
      'GET /api/v1/tokens/': page([]),
      'POST /api/v1/auth/password/': [
        {
          status: 400,
          body: {
            detail: 'Invalid input.',
            errors: { current_password: ['This is not your current password.'] },
          },
        },
        { status: 204 },
      ],
    });
    await openProfile();
    const fill = (label: string, value: string) => {
      fireEvent.change(screen.getByLabelText(label), { target: { value } });
    };
    fill('Current password', 'wrong');
    fill('New password', 'a-long-new-passphrase');
    fill('New password again', 'a-long-new-passphrase!');
    fireEvent.click(screen.getByRole('button', { name: 'Change password' }));
    expect(await screen.findByText('The two new passwords differ.')).toBeTruthy();
    expect(requests.filter((r) => r.method === 'POST')).toEqual([]);

    fill('New password again', 'a-long-new-passphrase');
    fireEvent.click(screen.getByRole('button', { name: 'Change password' }));
    expect(await screen.findByText('This is not your current password.')).toBeTruthy();

    fill('Current password', 'correct horse');
    fireEvent.click(screen.getByRole('button', { name: 'Change password' }));
    expect(await screen.findByText('Password changed.')).toBeTruthy();
    expect(requests.filter((r) => r.method === 'POST').map((r) => r.body)).toEqual([
      { current_password: 'wrong', new_password: 'a-long-new-passphrase' },
      { current_password: 'correct horse', new_password: 'a-long-new-passphrase' },
    ]);
    await waitFor(() => {
      expect(screen.getByLabelText<HTMLInputElement>('Current password').value).toBe('');
    });
  });

  it("saves the language switch's choice with the profile, for emailed notices", async () => {
    const { requests } = stubFetch({
      'GET /api/v1/auth/session/': sessionOf(BOB),
      'GET /api/v1/tokens/': page([]),
      'PATCH /api/v1/auth/profile/': { status: 200, body: { ...PROFILE, language: 'zh' } },
    });
    await openProfile();
    expect(
      screen.getByText(
        'Notices emailed to you are written in this language too (English until you choose one).',
      ),
    ).toBeTruthy();
    fireEvent.click(within(screen.getByRole('tabpanel')).getByText('中文'));
    expect(await screen.findByRole('tab', { name: '个人资料' })).toBeTruthy();
    await waitFor(() => {
      expect(requests.filter((r) => r.method === 'PATCH').map((r) => r.body)).toEqual([
        { language: 'zh' },
      ]);
    });
  });

  it("opens in the user's saved language in a browser that has not chosen one", async () => {
    const { requests } = stubFetch({
      'GET /api/v1/auth/session/': sessionOf({ ...BOB, user: { ...BOB.user, language: 'zh' } }),
      'GET /api/v1/tokens/': page([]),
    });
    renderApp('/settings');
    expect(await screen.findByRole('tab', { name: '个人资料' })).toBeTruthy();
    expect(requests.filter((r) => r.method === 'PATCH')).toEqual([]);
  });

  it("gives the server this browser's language when the user has none saved", async () => {
    await setLanguage('zh');
    const { requests } = stubFetch({
      'GET /api/v1/auth/session/': sessionOf(BOB),
      'GET /api/v1/tokens/': page([]),
      'PATCH /api/v1/auth/profile/': { status: 200, body: { ...PROFILE, language: 'zh' } },
    });
    renderApp('/settings');
    await waitFor(() => {
      expect(requests.filter((r) => r.method === 'PATCH').map((r) => r.body)).toEqual([
        { language: 'zh' },
      ]);
    });
  });

  it('offers no password form to a user who signs in through single sign-on', async () => {
    stubFetch({
      'GET /api/v1/auth/session/': sessionOf({
        ...BOB,
        user: { ...BOB.user, has_password: false },
      }),
      'GET /api/v1/tokens/': page([]),
    });
    await openProfile();
    expect(screen.getByText(/You sign in through single sign-on/)).toBeTruthy();
    expect(screen.queryByLabelText('Current password')).toBeNull();
  });
});
