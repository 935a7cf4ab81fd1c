/**
 * Fenced changes to the documents a lock protects (docs/API.md "Fenced changes"), as the Python
 * client's `eslm/fenced.py` makes them.
 *
 * A fenced change is an `_update` that runs the plugin's update script (`"lang": "eslm", "source":
 * "fence"`) with the held lock's token and key: on the document's primary, in the same operation as
 * the change, it applies the change only when the token is at least the highest that changed the
 * document (kept in the document's `eslm_fence`), and otherwise makes the update a `noop`. The
 * answer carries the document with its fence (`"_source": true`), which tells an applied change
 * from a stale one: `noop` with a larger fence token than ours is stale (`StaleToken`).
 *
 * - A partial document merges (`doc`), an array of field operations (`ops.inc`, ...) runs on the
 *   primary's copy (`ops`), `ops.DELETE` leaves a tombstone (`delete`).
 * - A read-modify-write with a function: a fenced read first (the update with no change, which
 *   raises the fence to our token and answers the source: from then on a stale holder's write is
 *   refused, and one that landed before is in what we read), then the function's result written
 *   whole (`replace`) with the same token, refused if a newer holder came in between.
 * - Many changes in one `_bulk`, each fenced on its own, answered per item.
 */

import { isDeepStrictEqual } from 'node:util'

import { InvalidArgument, LockError, StaleToken, fromResponse } from './errors'
import { describe } from './options'
import type { Rest } from './rest'

/** The field of a fenced document that holds its fence: the plugin writes it, a change never may. */
export const FENCE_FIELD = 'eslm_fence'

/** Elasticsearch re-runs the read-script-write on the primary when another write of the same
 * document got in between; 3 times is plenty (docs/API.md "Fenced changes"). */
export const RETRY_ON_CONFLICT = 3

/** One field operation of a fenced change, as the plugin's `fence` script takes it. */
export interface FieldOp {
  readonly op: 'inc' | 'append' | 'set' | 'remove'
  /** A dotted field name (`"stats.count"`). */
  readonly field: string
  readonly value?: unknown
}

/** The marker of a fenced delete (`held.bulk([{index, id, change: ops.DELETE}])`, or
 * `held.update(index, id, ops.DELETE)`, which `held.delete` does). */
export interface Delete { readonly delete: true }

const DELETE: Delete = Object.freeze({ delete: true as const })

/** A partial document (merged), field operations (run in order on the document as its primary
 * holds it), or `ops.DELETE`. */
export type FencedChangeOf<T extends object = Record<string, unknown>> = Partial<T> | readonly FieldOp[] | Delete

/** A read-modify-write: the document's source (null when missing or a tombstone) to the whole new
 * document, or null/undefined (or the source unchanged) to write nothing. */
export type ModifyFn<T extends object = Record<string, unknown>> =
  (source: T | null) => T | null | undefined | Promise<T | null | undefined>

/** One change of `held.bulk(...)`. */
export interface FencedChange {
  index: string
  id: string
  /** A partial document, field operations, or `ops.DELETE` (no function: a read-modify-write
   * needs its read first, `held.update`). */
  change: FencedChangeOf
}

export interface FencedOptions {
  /** A multi-lock's key whose token fences the change (required for a multi-lock). */
  key?: string
  /** Elasticsearch's `refresh` parameter: true, false or `"wait_for"`. */
  refresh?: boolean | 'wait_for'
}

/** How one item of `held.bulk(...)` ended. */
export type Outcome = 'applied' | 'stale' | 'failed'

/** One item of `held.bulk(...)`: `outcome` is `"applied"` (the change is in the document, or left
 * it as it was), `"stale"` (a newer holder had changed the document: nothing written; `error` is
 * the `StaleToken`) or `"failed"` (`error` is the server's error for this item, e.g.
 * `IllegalArgument` for an `inc` of text: nothing written). `source` is the document as it now
 * stands, without its fence (null for a tombstone, or when not applied); `fence` the document's
 * fence token (the newer holder's when stale; undefined when failed). */
export class FencedResult {
  constructor (
    readonly index: string,
    readonly id: string,
    readonly outcome: Outcome,
    readonly source: Record<string, unknown> | null = null,
    readonly fence: bigint | undefined = undefined,
    readonly error: LockError | undefined = undefined
  ) {}

  /** Whether the change is in the document. */
  get applied (): boolean { return this.outcome === 'applied' }
  /** Whether a newer holder's token refused it. */
  get stale (): boolean { return this.outcome === 'stale' }
  /** Whether the server refused it for another reason (`error`). */
  get failed (): boolean { return this.outcome === 'failed' }
}

const TAKES_A_VALUE: Record<string, boolean> = { set: true, append: true, inc: true, remove: false }

/** `op` if it is a field operation the plugin takes, else `InvalidArgument` naming what is wrong
 * (the checks the server makes that need no document). */
export function checkOp (op: unknown, where = '[ops]'): FieldOp {
  if (op === null || typeof op !== 'object' || Array.isArray(op)) {
    throw new InvalidArgument(`${where} must be a field operation {op, field, value?}, got [${describe(op)}]`)
  }
  const o = op as Record<string, unknown>
  const unknown = Object.keys(o).filter(k => !['op', 'field', 'value'].includes(k) && o[k] !== undefined).sort()
  if (unknown.length > 0) throw new InvalidArgument(`${where} has an unknown member [${unknown.join(', ')}]`)
  const name = o.op
  if (typeof name !== 'string' || !(name in TAKES_A_VALUE)) {
    throw new InvalidArgument(`${where} [op] must be one of [set], [inc], [append], [remove], got [${describe(name)}]`)
  }
  const field = o.field
  if (typeof field !== 'string' || field === '' || field.split('.').includes('')) {
    throw new InvalidArgument(`${where} [field] must be a dotted field name without an empty segment, got [${describe(field)}]`)
  }
  if (field.split('.')[0] === FENCE_FIELD) {
    throw new InvalidArgument(`${where} [field] must not name [${FENCE_FIELD}]: the fence is the plugin's to write`)
  }
  const hasValue = o.value !== undefined
  if (TAKES_A_VALUE[name] !== hasValue) {
    throw new InvalidArgument(`${where} [${name}] ${TAKES_A_VALUE[name] === true ? 'needs a [value]' : 'takes no [value]'}`)
  }
  if (name === 'inc') {
    const by = o.value
    if (!(typeof by === 'bigint' || (typeof by === 'number' && Number.isFinite(by)))) {
      throw new InvalidArgument(`${where} [value] of [inc] must be a finite number, got [${describe(by)}]`)
    }
  }
  return hasValue ? { op: name as FieldOp['op'], field, value: o.value } : { op: name as FieldOp['op'], field }
}

/**
 * The field operations of a fenced change, and the delete marker:
 *
 *     await held.update('orders', '42', [ops.inc('items'), ops.append('log', 'packed')])
 *     await held.bulk([{ index: 'orders', id: '43', change: ops.DELETE }])
 *
 * A bad operation is refused with `InvalidArgument` when it is made, before anything is sent.
 */
export const ops = Object.freeze({
  /** Adds `by` (default 1) to the number in `field`; a missing field counts as 0. */
  inc: (field: string, by: number | bigint = 1): FieldOp => checkOp({ op: 'inc', field, value: by }, '[ops.inc]'),
  /** Appends `value` to the list in `field`; a missing field is an empty list. */
  append: (field: string, value: unknown): FieldOp => checkOp({ op: 'append', field, value }, '[ops.append]'),
  /** Sets `field` to `value` (null: JSON null); objects on the way are created. */
  set: (field: string, value: unknown): FieldOp => checkOp({ op: 'set', field, value }, '[ops.set]'),
  /** Removes `field` if it is there. */
  remove: (field: string): FieldOp => checkOp({ op: 'remove', field }, '[ops.remove]'),
  /** A fenced delete: the document becomes a tombstone that keeps its fence. */
  DELETE
})

/** The lock a change is fenced by: its key and fencing token. */
export interface Fence {
  readonly key: string
  readonly token: bigint
}

/** The script's params for `change` (a partial document, field operations or `ops.DELETE`);
 * anything else, or a document that sets the fence, is refused before anything is sent. */
export function changeParams (change: unknown, where = '[change]'): Record<string, unknown> {
  if (change === DELETE) return { delete: true }
  if (Array.isArray(change)) return { ops: change.map((op, i) => checkOp(op, `${where} entry ${i}`)) }
  if (change !== null && typeof change === 'object') return { doc: document(change, where) }
  throw new InvalidArgument(`${where} must be a partial document (an object), an array of field operations (ops.inc, ...), ` +
    `ops.DELETE or a function of the document, got [${describe(change)}]`)
}

/** `doc` as a document a change may write: an object that does not set the fence. */
function document (doc: unknown, where: string): Record<string, unknown> {
  if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) {
    throw new InvalidArgument(`${where} must be a document (an object), got [${describe(doc)}]`)
  }
  if (Object.prototype.hasOwnProperty.call(doc, FENCE_FIELD)) {
    throw new InvalidArgument(`${where} must not set [${FENCE_FIELD}]: the fence is the plugin's to write`)
  }
  return doc as Record<string, unknown>
}

/** The body of a fenced `_update` (also a bulk `update` action's second line). */
function updateBody (fence: Fence, params: Record<string, unknown>): Record<string, unknown> {
  return {
    script: { lang: 'eslm', source: 'fence', params: { token: fence.token, key: fence.key, ...params } },
    scripted_upsert: true,
    upsert: {},
    _source: true
  }
}

export function checkNames (index: unknown, id: unknown, where = ''): void {
  if (typeof index !== 'string' || index === '') throw new InvalidArgument(`${where}[index] must be a non-empty string, got [${describe(index)}]`)
  if (typeof id !== 'string' || id === '') throw new InvalidArgument(`${where}[id] must be a non-empty string, got [${describe(id)}]`)
}

export function checkRefresh (refresh: unknown): void {
  if (refresh !== undefined && refresh !== true && refresh !== false && refresh !== 'wait_for') {
    throw new InvalidArgument(`[refresh] must be true, false or "wait_for", got [${describe(refresh)}]`)
  }
}

function query (params: Record<string, unknown>): string {
  const q = Object.entries(params)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(String(v))}`)
    .join('&')
  return q === '' ? '' : `?${q}`
}

/** What `held.update` does once checked: `change` a partial document, field operations,
 * `ops.DELETE`, or a function of the source (a fenced read, then its result written whole with the
 * same token). `stillHeld()` throws if the lock is known lost between the read and the write.
 * Answers the document as it now stands (null for a tombstone). */
export async function update<T extends object> (rest: Rest, index: string, id: string, fence: Fence,
  change: FencedChangeOf<T> | ModifyFn<T>, refresh: FencedOptions['refresh'], stillHeld: () => void): Promise<T | null> {
  if (typeof change === 'function') {
    const current = await fencedCall(rest, index, id, fence, {}, undefined) as T | null
    const changed = await change(current === null ? null : structuredClone(current))
    if (changed === null || changed === undefined || isDeepStrictEqual(changed, current)) return current
    const replacement = document(changed, 'the change\'s result')
    stillHeld()
    return await fencedCall(rest, index, id, fence, { replace: replacement }, refresh) as T | null
  }
  return await fencedCall(rest, index, id, fence, changeParams(change), refresh) as T | null
}

/** One fenced `_update`: the document as it now stands, or the error (a stale one `StaleToken`). */
export async function fencedCall (rest: Rest, index: string, id: string, fence: Fence,
  params: Record<string, unknown>, refresh: FencedOptions['refresh']): Promise<Record<string, unknown> | null> {
  const path = `/${encodeURIComponent(index)}/_update/${encodeURIComponent(id)}` +
    query({ retry_on_conflict: RETRY_ON_CONFLICT, refresh })
  let answer: any
  try {
    answer = await rest.send({ method: 'POST', path, body: updateBody(fence, params) })
  } catch (e) {
    throw e instanceof LockError ? explained(e) : e
  }
  const result = outcome(index, id, fence, answer)
  if (result.error !== undefined) throw result.error
  return result.source
}

/** A token as the parser gave it (a number, or a bigint beyond 2^53), as a bigint. */
function tokenOf (value: unknown): bigint | undefined {
  if (typeof value === 'bigint') return value
  if (typeof value === 'number' && Number.isSafeInteger(value)) return BigInt(value)
  return undefined
}

/** How a fenced update answered (docs/API.md "Fenced changes", how to read the answer): `noop`
 * with a fence token larger than ours is stale; anything else applied. */
export function outcome (index: string, id: string, fence: Fence, answer: any): FencedResult {
  const got = answer?.get?._source
  const source: Record<string, unknown> = got !== null && typeof got === 'object' ? got : {}
  const fenced = source[FENCE_FIELD] as Record<string, unknown> | undefined
  const seen = tokenOf(fenced !== null && typeof fenced === 'object' ? fenced.token : undefined)
  if (seen === undefined) {
    return new FencedResult(index, id, 'failed', null, undefined, new LockError(
      `fenced change of [${index}/${id}] answered without the document's fence: ${describe(answer)}`, { body: answer }))
  }
  if (answer.result === 'noop' && seen > fence.token) {
    const stale = new StaleToken(
      `fenced change of [${index}/${id}] refused: the document's fence is token [${seen}] of ` +
      `[${String((fenced as Record<string, unknown>).key)}], this lock's token is [${fence.token}]: a newer holder has changed it`,
      { type: 'stale_token', body: answer, fence: seen, token: fence.token })
    return new FencedResult(index, id, 'stale', null, seen, stale)
  }
  if ((fenced as Record<string, unknown>).deleted === true) return new FencedResult(index, id, 'applied', null, seen)
  const { [FENCE_FIELD]: _fence, ...rest } = source
  return new FencedResult(index, id, 'applied', rest, seen)
}

/** A refused fenced change with the plugin's reason: Elasticsearch's own is `failed to execute
 * script`, the plugin's (`[ops] entry 0: ...`) is its `caused_by`. */
export function explained (error: LockError): LockError {
  const cause = error.error.caused_by as { reason?: unknown } | undefined
  const reason = cause !== null && typeof cause === 'object' ? cause.reason : undefined
  if (typeof reason !== 'string' || error.reason.includes(reason)) return error
  const cls = error.constructor as new (reason: string, options: object) => LockError
  return new cls(`${error.reason}: ${reason}`, { status: error.status, type: error.type, body: error.body, cause: error })
}

/** What `held.bulk` does: every change checked (no functions), then one `_bulk` of fenced updates;
 * answers a `FencedResult` per item, in order, and throws only for the request as a whole. */
export async function bulk (rest: Rest, changes: readonly FencedChange[], fence: Fence,
  refresh: FencedOptions['refresh']): Promise<FencedResult[]> {
  if (!Array.isArray(changes)) throw new InvalidArgument(`[changes] must be an array of {index, id, change}, got [${describe(changes)}]`)
  const lines: unknown[] = []
  changes.forEach((item, n) => {
    const where = `[changes] item ${n}: `
    if (item === null || typeof item !== 'object') throw new InvalidArgument(`${where}must be {index, id, change}, got [${describe(item)}]`)
    const unknown = Object.keys(item).filter(k => !['index', 'id', 'change'].includes(k))
    if (unknown.length > 0) throw new InvalidArgument(`${where}has an unknown member [${unknown.join(', ')}]`)
    checkNames(item.index, item.id, where)
    if (typeof item.change === 'function') {
      throw new InvalidArgument(`${where}a function of the document needs its read first: use held.update for a read-modify-write`)
    }
    lines.push({ update: { _index: item.index, _id: item.id, retry_on_conflict: RETRY_ON_CONFLICT } },
      updateBody(fence, changeParams(item.change, `${where}[change]`)))
  })
  if (changes.length === 0) return []
  const answer = await rest.send({ method: 'POST', path: `/_bulk${query({ refresh })}`, ndjson: lines })
  const items: any[] = Array.isArray(answer?.items) ? answer.items : []
  return changes.map((c, i) => itemResult(c.index, c.id, fence, items[i]))
}

function itemResult (index: string, id: string, fence: Fence, entry: any): FencedResult {
  const answer = entry?.update
  if (answer === undefined || answer === null) {
    return new FencedResult(index, id, 'failed', null, undefined, new LockError(`_bulk answered no item for [${index}/${id}]`))
  }
  if (answer.error !== undefined) {
    return new FencedResult(index, id, 'failed', null, undefined, explained(fromResponse(Number(answer.status ?? 0), { error: answer.error })))
  }
  return outcome(index, id, fence, answer)
}
