import { ConvergeError } from '../errors.ts';

/** Stable codes of client helper errors. */
export const ClientErrorCodes = {
  ALREADY_OWNED: 'CONVERGE_ERR_CLIENT_ALREADY_OWNED',
  INVALID_OWNER: 'CONVERGE_ERR_CLIENT_INVALID_OWNER',
} as const;

/** The object already has a different controller owner (controller-runtime's AlreadyOwnedError). */
export class AlreadyOwnedError extends ConvergeError {
  readonly owner: { readonly kind: string; readonly name: string };
  constructor(object: string, owner: { kind: string; name: string }) {
    super(
      ClientErrorCodes.ALREADY_OWNED,
      `Object ${object} is already owned by another ${owner.kind} controller ${owner.name}`,
    );
    this.owner = owner;
  }
}

/** The owner cannot own the object (cross-namespace, missing uid, missing apiVersion/kind). */
export class InvalidOwnerError extends ConvergeError {
  constructor(message: string) {
    super(ClientErrorCodes.INVALID_OWNER, message);
  }
}
