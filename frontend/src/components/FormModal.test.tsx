import { StyleProvider } from '@ant-design/cssinjs';
import { QueryClient, QueryClientProvider, useMutation } from '@tanstack/react-query';
import { fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { Form, Input } from 'antd';
import { describe, expect, it, vi } from 'vitest';
import { FormModal } from './FormModal';

interface Values {
  name: string;
}

/** A create dialog as the pages write one: onFinish starts the mutation. */
function CreateDialog({ save }: { save: (values: Values) => Promise<unknown> }) {
  const [form] = Form.useForm<Values>();
  const mutation = useMutation({ mutationFn: save });
  return (
    <FormModal
      title="New thing"
      okText="Save"
      form={form}
      pending={mutation.isPending}
      onClose={() => undefined}
    >
      <Form<Values>
        form={form}
        onFinish={(values) => {
          mutation.mutate(values);
        }}
      >
        <Form.Item name="name" label="Name" rules={[{ required: true, message: 'Name it.' }]}>
          <Input />
        </Form.Item>
      </Form>
    </FormModal>
  );
}

function renderDialog(save: (values: Values) => Promise<unknown>) {
  const queryClient = new QueryClient({ defaultOptions: { mutations: { retry: false } } });
  render(
    <StyleProvider container={document.createElement('div')}>
      <QueryClientProvider client={queryClient}>
        <CreateDialog save={save} />
      </QueryClientProvider>
    </StyleProvider>,
  );
  return within(screen.getByRole('dialog'));
}

/** A request that stays open until the test answers it. */
function openRequest() {
  let answer: (ok: boolean) => void = () => undefined;
  const save = vi.fn(
    () =>
      new Promise((resolve, reject) => {
        answer = (ok) => {
          if (ok) resolve({});
          else reject(new Error('name taken'));
        };
      }),
  );
  return {
    save,
    answer: (ok: boolean) => {
      answer(ok);
    },
  };
}

describe('FormModal', () => {
  it('sends one request for a double click on OK, and shows it is busy', async () => {
    const user = userEvent.setup();
    const { save, answer } = openRequest();
    const dialog = renderDialog(save);
    await user.type(dialog.getByLabelText('Name'), 'alpha');
    await user.dblClick(dialog.getByRole('button', { name: 'Save' }));
    await waitFor(() => {
      expect(save).toHaveBeenCalledTimes(1);
    });
    const ok = dialog.getByRole<HTMLButtonElement>('button', { name: /Save/ });
    expect(ok.className).toMatch(/loading/);
    expect(ok.disabled).toBe(true);
    // More clicks while the request is open send nothing either.
    await user.click(ok);
    expect(save).toHaveBeenCalledTimes(1);

    // Once it has failed, OK works again (to retry after fixing the field).
    answer(false);
    await waitFor(() => {
      // By its exact name: enabled and no longer showing the spinner ("loading Save").
      expect(dialog.getByRole<HTMLButtonElement>('button', { name: 'Save' }).disabled).toBe(false);
    });
    await user.click(dialog.getByRole('button', { name: 'Save' }));
    await waitFor(() => {
      expect(save).toHaveBeenCalledTimes(2);
    });
  });

  it('sends one request when it settles at once, and OK works again after', async () => {
    const user = userEvent.setup();
    const save = vi.fn(() => Promise.reject(new Error('name taken')));
    const dialog = renderDialog(save);
    await user.type(dialog.getByLabelText('Name'), 'alpha');
    await user.dblClick(dialog.getByRole('button', { name: 'Save' }));
    await waitFor(() => {
      expect(save).toHaveBeenCalledTimes(1);
    });
    await waitFor(() => {
      // By its exact name: enabled and no longer showing the spinner ("loading Save").
      expect(dialog.getByRole<HTMLButtonElement>('button', { name: 'Save' }).disabled).toBe(false);
    });
    await user.click(dialog.getByRole('button', { name: 'Save' }));
    await waitFor(() => {
      expect(save).toHaveBeenCalledTimes(2);
    });
  });

  it('sends one request for Enter pressed twice in a field', async () => {
    const user = userEvent.setup();
    const { save, answer } = openRequest();
    const dialog = renderDialog(save);
    await user.type(dialog.getByLabelText('Name'), 'alpha{Enter}{Enter}');
    await waitFor(() => {
      expect(save).toHaveBeenCalledTimes(1);
    });
    await user.type(dialog.getByLabelText('Name'), '{Enter}'); // still open: nothing
    expect(save).toHaveBeenCalledTimes(1);
    answer(false);
    await waitFor(() => {
      // By its exact name: enabled and no longer showing the spinner ("loading Save").
      expect(dialog.getByRole<HTMLButtonElement>('button', { name: 'Save' }).disabled).toBe(false);
    });
    await user.type(dialog.getByLabelText('Name'), '{Enter}'); // a retry after the refusal
    await waitFor(() => {
      expect(save).toHaveBeenCalledTimes(2);
    });
  });

  it('leaves Enter to an input method that is composing', async () => {
    const user = userEvent.setup();
    const save = vi.fn(() => Promise.resolve({}));
    const dialog = renderDialog(save);
    const field = dialog.getByLabelText('Name');
    await user.type(field, '模型');
    fireEvent.keyDown(field, { key: 'Enter', isComposing: true }); // picks the characters
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(save).not.toHaveBeenCalled();
    fireEvent.keyDown(field, { key: 'Enter' });
    await waitFor(() => {
      expect(save).toHaveBeenCalledWith({ name: '模型' }, expect.anything());
    });
  });

  it('lets OK be clicked again after a validation error', async () => {
    const user = userEvent.setup();
    const save = vi.fn(() => Promise.resolve({}));
    const dialog = renderDialog(save);
    await user.click(dialog.getByRole('button', { name: 'Save' }));
    expect(await dialog.findByText('Name it.')).toBeTruthy();
    expect(save).not.toHaveBeenCalled();
    await user.type(dialog.getByLabelText('Name'), 'alpha');
    await user.click(dialog.getByRole('button', { name: 'Save' }));
    await waitFor(() => {
      expect(save).toHaveBeenCalledWith({ name: 'alpha' }, expect.anything());
    });
  });
});
