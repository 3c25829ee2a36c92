import { PlusOutlined } from '@ant-design/icons';
import { Button } from 'antd';

/** The primary "create" button at the top right of a list page. */
export function CreateButton({ label, onClick }: { label: string; onClick: () => void }) {
  return (
    <Button type="primary" icon={<PlusOutlined />} onClick={onClick}>
      {label}
    </Button>
  );
}
