import { BadRequestError } from '@converge/runtime';

/**
 * Stable codes of Table errors (never reused).
 *
 * @example
 * if ((error as { code?: string }).code === TableErrorCodes.INCLUDE_OBJECT_INVALID) respond(400);
 */
export const TableErrorCodes = {
  /** The `includeObject` query parameter is not `None`, `Metadata` or `Object`. */
  INCLUDE_OBJECT_INVALID: 'CONVERGE_ERR_APISERVER_TABLE_INCLUDE_OBJECT_INVALID',
} as const;

/**
 * A Table request carried an invalid option: a 400 BadRequest (it is a {@link BadRequestError})
 * whose message is kube-apiserver's (`unrecognized includeObject value: "x"`).
 *
 * @example
 * try { wantsTable(accept, query.get('includeObject')); } catch (e) { if (e instanceof TableOptionsError) sendStatus(e); }
 */
export class TableOptionsError extends BadRequestError {
  override readonly code: typeof TableErrorCodes.INCLUDE_OBJECT_INVALID =
    TableErrorCodes.INCLUDE_OBJECT_INVALID;
}
