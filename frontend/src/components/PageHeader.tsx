import { Typography } from 'antd';
import type { ReactNode } from 'react';
import { useDocumentTitle } from '../lib/useDocumentTitle';

interface Props {
  title: string;
  subtitle?: string;
  extra?: ReactNode;
}

export function PageHeader({ title, subtitle, extra }: Props) {
  useDocumentTitle(title);
  return (
    <div
      style={{
        display: 'flex',
        alignItems: 'flex-start',
        justifyContent: 'space-between',
        gap: 16,
        marginBottom: 20,
        flexWrap: 'wrap',
      }}
    >
      <div>
        <Typography.Title level={3} style={{ margin: 0 }}>
          {title}
        </Typography.Title>
        {subtitle !== undefined && (
          <Typography.Text type="secondary" style={{ display: 'block', marginTop: 4 }}>
            {subtitle}
          </Typography.Text>
        )}
      </div>
      {extra !== undefined && (
        <div style={{ display: 'flex', flexWrap: 'wrap', gap: 12 }}>{extra}</div>
      )}
    </div>
  );
}
