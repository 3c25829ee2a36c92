import { Modal } from 'antd';
import type { ReactNode } from 'react';
import { useTranslation } from 'react-i18next';

interface Props {
  title: string;
  okText: string;
  /** The form inside; OK submits it, so its own validation and onFinish run. */
  form: { submit: () => void };
  pending: boolean;
  onClose: () => void;
  children: ReactNode;
}

/** A create dialog around one form: shown while mounted, the parent unmounts it to close. */
export function FormModal({ title, okText, form, pending, onClose, children }: Props) {
  const { t } = useTranslation();
  return (
    <Modal
      open
      title={title}
      okText={okText}
      cancelText={t('submit.cancel')}
      onCancel={onClose}
      onOk={() => {
        form.submit();
      }}
      confirmLoading={pending}
      destroyOnHidden
    >
      {children}
    </Modal>
  );
}
