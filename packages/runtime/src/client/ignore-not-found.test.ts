import { describe, expect, it } from 'vitest';
import { ConflictError, NotFoundError } from '../backend/index.ts';
import { configMapType } from '../kinds/index.ts';
import { ReferenceBackend } from '../testing/backend-suite/index.ts';
import { Client } from './client.ts';
import { ignoreNotFound } from './ignore-not-found.ts';

describe('ignoreNotFound', () => {
  it('turns a NotFoundError into undefined', () => {
    expect(ignoreNotFound(new NotFoundError('configmaps "x" not found'))).toBeUndefined();
  });

  it('throws every other error on, as it is', () => {
    const conflict = new ConflictError('the object has been modified');
    expect(() => ignoreNotFound(conflict)).toThrow(conflict);
    const plain = new Error('boom');
    expect(() => ignoreNotFound(plain)).toThrow(plain);
    expect(() => ignoreNotFound('not an error')).toThrow('not an error');
  });

  it('as a .catch handler: a missing object reads as undefined, an existing one as itself', async () => {
    const client = new Client({ backend: new ReferenceBackend({ types: [configMapType] }) });
    const key = { namespace: 'default', name: 'settings' };
    expect(await client.get(configMapType, key).catch(ignoreNotFound)).toBeUndefined();
    expect(await client.delete(configMapType, key).catch(ignoreNotFound)).toBeUndefined();
    await client.create(configMapType, { metadata: key, data: { a: 'b' } });
    const found = await client.get(configMapType, key).catch(ignoreNotFound);
    expect(found?.data).toEqual({ a: 'b' });
    await expect(client.create(configMapType, { metadata: key }).catch(ignoreNotFound)).rejects.toMatchObject(
      { code: 'CONVERGE_ERR_BACKEND_ALREADY_EXISTS' },
    );
  });
});
