import { UploadOutlined } from '@ant-design/icons';
import { Alert, Button, Card, Input, Space, Tag, Typography, Upload } from 'antd';

const MONOSPACE = 'ui-monospace, SFMono-Regular, Menlo, Consolas, "Liberation Mono", monospace';

interface Props {
  title: string;
  /** The upload button's text. */
  uploadLabel: string;
  hint: string;
  /** The text area's label. */
  label: string;
  /** The text area's id, which the label points at. */
  id: string;
  value: string;
  onChange: (text: string) => void;
  /** Called with a file picked with the upload button (which uploads nothing itself). */
  onUpload: (file: File) => void;
  /** The tag saying which file the text was read from: none while the text was typed. */
  fromFile?: string;
  fromFileTestId: string;
  /** Why a picked file could not be read, if it could not. */
  uploadError: string | null;
  uploadErrorTestId: string;
  placeholder: string;
  rows: number;
}

/** A card to write a YAML or JSON spec file in (the CLI's), or to read one from disk. */
export function SpecFileCard({
  title,
  uploadLabel,
  hint,
  label,
  id,
  value,
  onChange,
  onUpload,
  fromFile,
  fromFileTestId,
  uploadError,
  uploadErrorTestId,
  placeholder,
  rows,
}: Props) {
  return (
    <Card
      title={title}
      extra={
        <Upload
          accept=".yaml,.yml,.json,application/json,application/yaml,text/yaml"
          showUploadList={false}
          beforeUpload={(picked) => {
            onUpload(picked);
            return false;
          }}
        >
          <Button icon={<UploadOutlined />}>{uploadLabel}</Button>
        </Upload>
      }
    >
      <Space orientation="vertical" style={{ width: '100%' }}>
        <Typography.Text type="secondary">{hint}</Typography.Text>
        <div>
          <label htmlFor={id}>
            <Typography.Text strong>{label}</Typography.Text>
          </label>
          {fromFile !== undefined && (
            <Tag style={{ marginLeft: 8 }} data-testid={fromFileTestId}>
              {fromFile}
            </Tag>
          )}
        </div>
        <Input.TextArea
          id={id}
          value={value}
          onChange={(e) => {
            onChange(e.target.value);
          }}
          placeholder={placeholder}
          rows={rows}
          spellCheck={false}
          style={{ fontFamily: MONOSPACE, fontSize: 13 }}
        />
        {uploadError !== null && (
          <Alert type="error" showIcon title={uploadError} data-testid={uploadErrorTestId} />
        )}
      </Space>
    </Card>
  );
}
