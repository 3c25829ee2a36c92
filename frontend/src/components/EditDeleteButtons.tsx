import { DeleteOutlined, EditOutlined } from '@ant-design/icons';
import { Button, Popconfirm, Space } from 'antd';
import { useTranslation } from 'react-i18next';

export interface EditDeleteButtonsProps {
  /** Accessible names of the two icon buttons, naming the row ("Edit xid:79"). */
  editLabel: string;
  deleteLabel: string;
  /** The question asked before deleting, and its confirm button. */
  confirm: string;
  deleteText: string;
  onEdit: () => void;
  onDelete: () => void;
}

/** A table row's edit and delete icons; delete asks first. */
export function EditDeleteButtons({
  editLabel,
  deleteLabel,
  confirm,
  deleteText,
  onEdit,
  onDelete,
}: EditDeleteButtonsProps) {
  const { t } = useTranslation();
  return (
    <Space>
      <Button size="small" icon={<EditOutlined />} aria-label={editLabel} onClick={onEdit} />
      <Popconfirm
        title={confirm}
        okText={deleteText}
        cancelText={t('common.no')}
        onConfirm={onDelete}
      >
        <Button size="small" danger icon={<DeleteOutlined />} aria-label={deleteLabel} />
      </Popconfirm>
    </Space>
  );
}
