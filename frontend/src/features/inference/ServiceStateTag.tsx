import { Tag } from 'antd';
import { JobStateTag } from '../../components/JobStateTag';
import { isJobState } from './labels';

/** The service's state as the Jobs pages show it; a state this build does not know, as sent. */
export function ServiceStateTag({ state }: { state: string }) {
  return isJobState(state) ? <JobStateTag state={state} /> : <Tag>{state}</Tag>;
}
