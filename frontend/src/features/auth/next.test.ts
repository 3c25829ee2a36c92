import { describe, expect, it } from 'vitest';
import { isServerPath, loginPathFor, safeNextPath } from './next';

describe('safeNextPath', () => {
  it.each([
    [null, '/'],
    ['/jobs?state=running', '/jobs?state=running'],
    ['//evil.example/x', '/'],
    ['/\\evil.example', '/'],
    ['https://evil.example/', '/'],
    ['/login?next=%2F', '/'],
  ])('%s -> %s', (next, expected) => {
    expect(safeNextPath(next)).toBe(expected);
  });
});

describe('loginPathFor', () => {
  it('keeps path, query and hash of the asked page', () => {
    expect(loginPathFor({ pathname: '/jobs', search: '?q=1', hash: '#top' })).toBe(
      '/login?next=%2Fjobs%3Fq%3D1%23top',
    );
  });
});

describe('isServerPath', () => {
  it.each([
    ['/notebooks/12/', true],
    ['/notebooks/12/lab?x=1', true],
    ['/notebooks/12', true],
    ['/notebooks', false],
    ['/notebooks/', false],
    ['/jobs/12', false],
  ])('%s -> %s', (path, expected) => {
    expect(isServerPath(path)).toBe(expected);
  });
});
