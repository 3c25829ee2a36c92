import type { paths } from '../api/schema';

// Types named by endpoint, not by schema component: component names follow the backend's
// serializer names and may change; the paths are the contract.
type Json<R> = R extends { content: { 'application/json': infer Body } } ? Body : never;
type Ok<Op> = Op extends { responses: { 200: infer R } } ? Json<R> : never;

export type Session = Ok<paths['/api/v1/auth/session/']['get']>;
export type SessionUser = Session['user'];
export type Membership = Session['memberships'][number];
export type Role = Membership['role'];
export type LoginBody = Json<NonNullable<paths['/api/v1/auth/login/']['post']['requestBody']>>;
export type Overview = Ok<paths['/api/v1/overview/']['get']>;
export type GpuModelCount = Overview['gpus_by_model'][number];
