/**
 * The errors of the client: one class per server error type of docs/API.md's Errors table,
 * mapped from Elasticsearch's error JSON (`error.type`), and the client's own signals (a lost lock
 * or session, a bad argument refused before anything is sent, no answer at all). The same classes
 * as the Python client's `eslm/errors.py`, without its `Exception` suffixes.
 */

/** Base of every error of this package. Server errors carry the HTTP `status`, the `error.type`
 * (`type`), the `reason` and the whole error JSON (`body`); client-side errors have `status`
 * undefined. */
export class LockError extends Error {
  /** The `error.type` this class stands for (undefined: the client's own error). */
  static readonly errorType: string | undefined = undefined
  /** The HTTP status of that type. */
  static readonly httpStatus: number | undefined = undefined

  readonly reason: string
  readonly status: number | undefined
  readonly type: string | undefined
  readonly body: unknown

  constructor (reason: string, options: { status?: number, type?: string, body?: unknown, cause?: unknown } = {}) {
    const ctor = new.target as typeof LockError
    const type = options.type ?? ctor.errorType
    super(options.status === undefined ? reason : `${options.status} ${type ?? 'error'}: ${reason}`,
      options.cause === undefined ? undefined : { cause: options.cause })
    this.name = ctor.name
    this.reason = reason
    this.status = options.status
    this.type = type
    this.body = options.body
  }

  /** The `error` object of the body ({} when there is none). */
  get error (): Record<string, unknown> {
    const body = this.body as { error?: unknown } | null | undefined
    const error = body !== null && typeof body === 'object' ? body.error : undefined
    return error !== null && typeof error === 'object' ? error as Record<string, unknown> : {}
  }
}

/** A bad argument (duration, mode, scope, priority, key, option name, ...) refused by the client
 * before any request is sent; the message names the option in brackets, as the server does. */
export class InvalidArgument extends LockError {}

/** A call on a closed `Locks` (an `InvalidArgument`, as in the Python client). */
export class ClientClosed extends InvalidArgument {}

// --- 400 ---------------------------------------------------------------------------------------

/** 400: the server refused the request's input. */
export class BadRequest extends LockError {}

/** 400 `x_content_parse_exception`: not JSON, not an object, an unknown field or a wrong JSON type. */
export class RequestParseError extends BadRequest {
  static override readonly errorType = 'x_content_parse_exception'
  static override readonly httpStatus = 400
}

/** 400 `x_content_e_o_f_exception`: the body ends in the middle of a JSON value. */
export class RequestEOFError extends BadRequest {
  static override readonly errorType = 'x_content_e_o_f_exception'
  static override readonly httpStatus = 400
}

/** 400 `illegal_argument_exception`: a field with a bad value, a missing field, a value over its cap. */
export class IllegalArgument extends BadRequest {
  static override readonly errorType = 'illegal_argument_exception'
  static override readonly httpStatus = 400
}

// --- 404 ---------------------------------------------------------------------------------------

/** 404: release or renew of a grant this owner does not hold (expired, force-released, replaced,
 * another token or acquisition), or force-release of a free key. */
export class LockNotHeld extends LockError {
  static override readonly errorType = 'lock_not_held_exception'
  static override readonly httpStatus = 404
}

/** 404: an unknown, ended or expired session, or another owner's. */
export class SessionNotFound extends LockError {
  static override readonly errorType = 'session_not_found_exception'
  static override readonly httpStatus = 404
}

/** 404: the group does not exist (never created, or deleted). */
export class GroupNotFound extends LockError {
  static override readonly errorType = 'group_not_found_exception'
  static override readonly httpStatus = 404
}

// --- 409 ---------------------------------------------------------------------------------------

/** 409: a try-lock found the key busy; `holders` names the holder(s). */
export class LockConflict extends LockError {
  static override readonly errorType = 'lock_conflict_exception'
  static override readonly httpStatus = 409

  /** The holder(s) the server named (`error.holders`). */
  get holders (): string[] {
    const holders = this.error.holders
    return typeof holders === 'string' ? [holders] : Array.isArray(holders) ? holders.map(String) : []
  }
}

/** 409: the request queued for its whole wait without being granted. */
export class LockWaitTimeout extends LockError {
  static override readonly errorType = 'lock_wait_timeout_exception'
  static override readonly httpStatus = 409
}

/** 409: this waiter closed a cycle of waiting owners and was chosen as the victim. */
export class Deadlock extends LockError {
  static override readonly errorType = 'deadlock_exception'
  static override readonly httpStatus = 409
}

/** 409: a semaphore acquire named another `limit` than the semaphore has while in use; `limit` is
 * the semaphore's. */
export class SemaphoreLimitMismatch extends LockError {
  static override readonly errorType = 'semaphore_limit_mismatch_exception'
  static override readonly httpStatus = 409

  /** The semaphore's limit (`error.limit`), undefined if the answer has none. */
  get limit (): number | undefined {
    const limit = this.error.limit
    return limit === undefined || limit === null ? undefined : Number(limit)
  }
}

/** 409: a group of that name exists already. */
export class GroupAlreadyExists extends LockError {
  static override readonly errorType = 'group_already_exists_exception'
  static override readonly httpStatus = 409
}

/** 409: a group that has members cannot be deleted; they leave first. */
export class GroupNotEmpty extends LockError {
  static override readonly errorType = 'group_not_empty_exception'
  static override readonly httpStatus = 409
}

/** 409: the member is in the group already, under another acquisition. */
export class MemberAlreadyJoined extends LockError {
  static override readonly errorType = 'member_already_joined_exception'
  static override readonly httpStatus = 409
}

/** 409 `version_conflict_engine_exception`: Elasticsearch refused a document write whose version
 * or sequence number did not match the document's. */
export class VersionConflict extends LockError {
  static override readonly errorType = 'version_conflict_engine_exception'
  static override readonly httpStatus = 409
}

/** A later holder of the lock got there first, and nothing of this holder's was written. Two ways:
 *
 * - a fenced write (`held.index(...)`) refused by Elasticsearch: the document already carries a
 *   larger version, written with the token of a later holder (409, Elasticsearch's error);
 * - a fenced change (`held.update`, `read`, `delete`, a `bulk` item) that the plugin's script made
 *   a `noop` because a later token had changed the document (docs/API.md "Fenced changes"): the
 *   answer was a 200, so `status` is undefined, `type` is `stale_token` and `body` the answer.
 *
 * `fence` is the document's fence (or version): a later holder's token; `token` this lock's. Both
 * are `bigint`, undefined when the answer did not say. */
export class StaleToken extends VersionConflict {
  /** The document's fence token (a later holder's), when known. */
  readonly fence: bigint | undefined
  /** The token of the lock that sent the change. */
  readonly token: bigint | undefined

  constructor (reason: string, options: { status?: number, type?: string, body?: unknown, cause?: unknown, fence?: bigint, token?: bigint } = {}) {
    const { fence, token, ...rest } = options
    super(reason, rest)
    this.fence = fence
    this.token = token
  }
}

/** `optimisticUpdate` gave up: each of its attempts lost its race with another writer. */
export class UpdateConflict extends VersionConflict {}

// --- 413, 429, 500, 503 ------------------------------------------------------------------------

/** 413: the body is longer than the limits allow. */
export class RequestTooLarge extends LockError {
  static override readonly errorType = 'status_exception'
  static override readonly httpStatus = 413
}

/** 429: a `locks.limits.*` limit was reached; `limit` names the setting. */
export class LimitExceeded extends LockError {
  static override readonly errorType = 'lock_limit_exceeded_exception'
  static override readonly httpStatus = 429

  /** The setting whose limit was reached (`error.limit`). */
  get limit (): string | undefined {
    const limit = this.error.limit
    return limit === undefined ? undefined : String(limit)
  }
}

/** 500: the lock core panicked serving this request (a bug); only this request failed. */
export class CorePanic extends LockError {
  static override readonly errorType = 'lock_core_panic_exception'
  static override readonly httpStatus = 500
}

/** 503 of any type: retried by the client within the caller's budget, thrown after it. */
export class Unavailable extends LockError {}

/** 503: the key's partition is moving, in recovery grace, or its owner is unconfirmed; or the node
 * that got the request is shutting down (`error.node_shutting_down` names it). Retried. */
export class PartitionUnavailable extends Unavailable {
  static override readonly errorType = 'lock_partition_unavailable_exception'
  static override readonly httpStatus = 503
}

// --- the client's signals ------------------------------------------------------------------------

/** A held lock was lost: the server ended it (the loss watch said so: force-released, expired,
 * replaced), a renewal or the release found it not held, renewals failed until its lease ran out,
 * or its session was lost. `held` is the handle; `cause` the error that showed the loss, if any. */
export class LockLost extends LockError {
  readonly held: unknown
  /** With `withLock` (and its kin): the error the callback itself threw, if it threw one. */
  blockError: unknown = undefined

  constructor (reason: string, held?: unknown, cause?: unknown) {
    super(reason, { cause })
    this.held = held
  }
}

/** A session ended on the server (expired, or keep-alives failed for its whole ttl): every lock
 * taken under it is lost too. */
export class SessionLost extends LockLost {}

/** Not acquired: the caller's `AbortSignal` aborted the waiting acquire. Its `name` is
 * `AbortError` and its `code` `ABORT_ERR`, as Node's own aborted calls; `cause` is the signal's
 * reason. A grant the server made in the same instant is released by its acquisition id. */
export class AcquireAborted extends LockError {
  readonly code = 'ABORT_ERR'

  constructor (reason: string, cause?: unknown) {
    super(reason, { cause })
    this.name = 'AbortError'
  }
}

/** Not acquired: the grant's answer arrived so late that its lease could already have run out,
 * and the renewal tried before handing it over found it gone or could not get through in time.
 * A `LockConflict`: `tryLock` answers null. */
export class GrantExpired extends LockConflict {}

/** The request got no answer: connection refused or reset, a timeout, TLS, no living node (after
 * the official client's own retries); `cause` is the official client's error. */
export class LockConnectionError extends LockError {}

const BY_TYPE = new Map<string, typeof LockError>()
for (const cls of [RequestParseError, RequestEOFError, IllegalArgument, LockNotHeld, SessionNotFound,
  LockConflict, LockWaitTimeout, SemaphoreLimitMismatch, Deadlock, RequestTooLarge, LimitExceeded,
  CorePanic, PartitionUnavailable, VersionConflict, GroupNotFound, GroupAlreadyExists, GroupNotEmpty,
  MemberAlreadyJoined] as Array<typeof LockError>) {
  BY_TYPE.set(`${cls.httpStatus} ${cls.errorType}`, cls)
}

/** The error for an error answer: by `error.type` (and status), else by status, else `LockError`. */
export function fromResponse (status: number, body: unknown): LockError {
  const error = body !== null && typeof body === 'object' ? (body as { error?: unknown }).error : undefined
  let type: string | undefined
  let reason: string
  if (error !== null && typeof error === 'object') {
    const e = error as { type?: unknown, reason?: unknown }
    type = typeof e.type === 'string' ? e.type : undefined
    reason = e.reason === undefined || e.reason === null ? '' : String(e.reason)
  } else {
    reason = error !== undefined ? String(error) : typeof body === 'string' ? body : JSON.stringify(body) ?? ''
  }
  const cls = BY_TYPE.get(`${status} ${type}`) ??
    (status === 400 ? BadRequest : status === 503 ? Unavailable : LockError)
  return new cls(reason, { status, type, body })
}
