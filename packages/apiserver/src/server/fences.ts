import type { IncomingMessage, ServerResponse } from 'node:http';
import { BadRequestError, checkFence, type Fence } from '@converge/runtime';
import type { Store } from '@converge/store';
import { methodNotAllowed } from './errors.ts';
import { readJsonObject } from './fault-admin-body.ts';
import { writeValue } from './respond.ts';

/**
 * Where owners announce their fences: `POST /converge/fences` with `{ "name", "holder", "epoch" }`
 * raises the store's mark for the name (200 with the mark) or refuses a stale fence (403, a Status
 * whose message says `stale fencing epoch`); `GET` lists the marks. After an announcement, writes
 * whose `Converge-Fence` header carries a lower epoch of the name are refused when they commit.
 * Authorized like any non-resource URL (`create` and `get` on `/converge/fences`).
 */
export const FENCES_PATH = '/converge/fences';

function fenceJson(fence: Fence): Record<string, unknown> {
  return {
    kind: 'Fence',
    apiVersion: 'converge.dev/v1',
    name: fence.name,
    holder: fence.holder,
    epoch: fence.epoch,
  };
}

/** Serves {@link FENCES_PATH}. */
export async function serveFences(store: Store, req: IncomingMessage, res: ServerResponse): Promise<void> {
  if (req.method === 'GET' || req.method === 'HEAD') {
    const items = store.fenceMarks().sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    writeValue(res, 200, { kind: 'FenceList', apiVersion: 'converge.dev/v1', items: items.map(fenceJson) });
    return;
  }
  if (req.method !== 'POST') throw methodNotAllowed();
  const body = await readJsonObject(req);
  if (body === undefined)
    throw new BadRequestError('POST /converge/fences needs a body { "name", "holder", "epoch" }');
  const extra = Object.keys(body).filter(
    (k) => !['name', 'holder', 'epoch', 'kind', 'apiVersion'].includes(k),
  );
  if (extra.length > 0) throw new BadRequestError(`unknown field "${extra[0]}" in a fence`);
  const fence = { name: body.name, holder: body.holder, epoch: body.epoch };
  checkFence(fence);
  writeValue(res, 200, fenceJson(await store.announceFence(fence)));
}
