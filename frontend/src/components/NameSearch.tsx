import { Input } from 'antd';

export interface NameSearchProps {
  /** Its accessible name and placeholder. */
  label: string;
  /** Called with the trimmed text on Enter or the search button; undefined when emptied. */
  onSearch: (name: string | undefined) => void;
  size?: 'small' | 'middle';
  width?: number;
}

/** A search box for a list's text filter (part of a name, or a username for the audit log). */
export function NameSearch({ label, onSearch, size, width = 200 }: NameSearchProps) {
  return (
    <Input.Search
      allowClear
      size={size}
      aria-label={label}
      placeholder={label}
      style={{ width }}
      onSearch={(value) => {
        const name = value.trim();
        onSearch(name === '' ? undefined : name);
      }}
    />
  );
}
