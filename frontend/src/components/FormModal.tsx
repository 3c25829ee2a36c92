import { useQueryClient, type Mutation, type MutationCache } from '@tanstack/react-query';
import { Form, Modal } from 'antd';
import { useRef, useState, type KeyboardEvent, type ReactNode } from 'react';
import { useTranslation } from 'react-i18next';

interface Props {
  title: string;
  okText: string;
  /** The form inside; OK submits it, so its own validation and onFinish run. */
  form: { submit: () => void; validateFields: () => Promise<unknown> };
  /** The pending state of the mutation that the form's onFinish starts. */
  pending: boolean;
  onClose: () => void;
  children: ReactNode;
}

/**
 * A create dialog around one form: shown while mounted, the parent unmounts it to close.
 *
 * OK submits once: from the click until the request it started has settled, OK shows that it
 * is busy and further clicks are ignored (a double click used to send two creates, the second
 * refused as a duplicate name). `pending` alone cannot guard this: a mutation reports its state
 * to React a tick after it starts, and validation runs before that, so a second click can come
 * before the first shows as pending. So the dialog keeps its own in-flight mark, set at once,
 * and clears it when the mutations the form's onFinish started have settled (from the query
 * client's mutation cache, which is up to date synchronously).
 */
export function FormModal({ title, okText, form, pending, onClose, children }: Props) {
  const { t } = useTranslation();
  const mutations = useQueryClient().getMutationCache();
  // A ref for the guard (a second click in the same tick sees it); state to render it.
  const inFlight = useRef(false);
  const [busy, setBusy] = useState(false);
  const mark = (on: boolean) => {
    inFlight.current = on;
    setBusy(on);
  };

  const onOk = () => {
    if (inFlight.current || pending) return;
    mark(true);
    // Validate here first so that a refusal (shown on the fields) ends this submission; then
    // submit, which runs the form's onFinish.
    form.validateFields().then(
      () => {
        form.submit();
      },
      () => {
        mark(false);
      },
    );
  };

  // Called just before the form's onFinish (also when Enter submits the form): what onFinish
  // starts synchronously is what becomes pending between now and the next microtask.
  const onFormFinish = () => {
    mark(true);
    const before = new Set(mutations.getAll().filter(isPending));
    queueMicrotask(() => {
      const started = mutations.getAll().filter((m) => isPending(m) && !before.has(m));
      void settled(mutations, started).then(() => {
        mark(false);
      });
    });
  };

  // Enter in a field submits as OK does, through the same guard: the form's own implicit
  // submission bypasses it, so a quick second Enter sent a second request. Not while an input
  // method is composing (Enter picks the characters), nor in a Select's search box (Enter
  // picks the option).
  const onKeyDownCapture = (event: KeyboardEvent<HTMLDivElement>) => {
    const target = event.target;
    if (event.key !== 'Enter' || event.nativeEvent.isComposing) return;
    if (!(target instanceof HTMLInputElement) || !SUBMITTING_INPUTS.has(target.type)) return;
    if (target.getAttribute('role') === 'combobox') return;
    event.preventDefault();
    onOk();
  };

  const locked = busy || pending;
  return (
    <Modal
      open
      title={title}
      okText={okText}
      cancelText={t('submit.cancel')}
      onCancel={onClose}
      onOk={onOk}
      confirmLoading={locked}
      okButtonProps={{ disabled: locked }}
      destroyOnHidden
    >
      <div onKeyDownCapture={onKeyDownCapture}>
        <Form.Provider onFormFinish={onFormFinish}>{children}</Form.Provider>
      </div>
    </Modal>
  );
}

/** Input types whose Enter submits their form in a browser (implicit submission). */
const SUBMITTING_INPUTS = new Set(['text', 'search', 'email', 'url', 'tel', 'password', 'number']);

function isPending(mutation: Mutation): boolean {
  return mutation.state.status === 'pending';
}

/** Resolves once none of `started` is pending any more (at once when there are none). */
function settled(cache: MutationCache, started: Mutation[]): Promise<void> {
  return new Promise((resolve) => {
    const check = () => {
      if (started.some(isPending)) return;
      unsubscribe();
      resolve();
    };
    const unsubscribe = cache.subscribe(check);
    check();
  });
}
