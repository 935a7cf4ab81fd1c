/**
 * Writes a lock, or no lock, keeps safe (docs/API.md "Fenced writes and optimistic updates"):
 *
 * - A fenced write: a held lock indexes a document with its fencing token as the document's
 *   external version (`version_type=external_gte`), so Elasticsearch itself refuses the write of a
 *   holder whose lock ended and whose key a later holder, with a larger token, already wrote.
 * - An optimistic update, without a lock: read the document, apply a function, write it back only
 *   if nobody wrote in between (`if_seq_no` / `if_primary_term`); on a conflict, read and apply
 *   again, a bounded number of times with a jittered backoff.
 */

import { isDeepStrictEqual } from 'node:util'

import { InvalidArgument, LockError, StaleToken, UpdateConflict, VersionConflict } from './errors'
import { describe } from './options'
import { type Rest, backoff, sleep } from './rest'

/** How many times an optimistic update reads and applies again after losing a race. */
export const DEFAULT_RETRIES = 10

export interface IndexOptions {
  /** Elasticsearch's `refresh` parameter: true, false or `"wait_for"`. */
  refresh?: boolean | 'wait_for'
}

export interface UpdateOptions extends IndexOptions {
  /** How many times more it reads and applies again after losing a race (default 10). */
  retries?: number
}

/** `/{index}/_doc/{id}?...`, both names escaped whole. */
export function docPath (index: string, id: string, params: Record<string, unknown>): string {
  const query = Object.entries(params)
    .filter(([, v]) => v !== undefined && v !== null)
    .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(String(v))}`)
    .join('&')
  return `/${encodeURIComponent(index)}/_doc/${encodeURIComponent(id)}${query === '' ? '' : `?${query}`}`
}

function checkDoc (index: unknown, id: unknown): void {
  if (typeof index !== 'string' || index === '') throw new InvalidArgument(`[index] must be a non-empty string, got [${describe(index)}]`)
  if (typeof id !== 'string' || id === '') throw new InvalidArgument(`[id] must be a non-empty string, got [${describe(id)}]`)
}

function checkRefresh (refresh: unknown): void {
  if (refresh !== undefined && refresh !== true && refresh !== false && refresh !== 'wait_for') {
    throw new InvalidArgument(`[refresh] must be true, false or "wait_for", got [${describe(refresh)}]`)
  }
}

/** Indexes `document` with `token` as its external version: accepted while the document's version
 * is at most `token`, refused with `StaleToken` once a later holder wrote with a larger one. */
export async function fencedIndex (rest: Rest, index: string, id: string, document: object, token: bigint,
  options: IndexOptions): Promise<any> {
  checkDoc(index, id)
  checkRefresh(options.refresh)
  if (document === null || typeof document !== 'object' || Array.isArray(document)) {
    throw new InvalidArgument(`[document] must be an object, got [${describe(document)}]`)
  }
  const path = docPath(index, id, { version: token, version_type: 'external_gte', refresh: options.refresh })
  try {
    return await rest.send({ method: 'PUT', path, body: document })
  } catch (e) {
    if (e instanceof VersionConflict) {
      // Elasticsearch names the document's version: "current version [N] is higher ...".
      const current = /current version \[(\d+)\]/.exec(e.reason)
      throw new StaleToken(`write of [${index}/${id}] with fencing token [${token}] refused: ${e.reason}`,
        { status: e.status, type: e.type, body: e.body, cause: e, token, fence: current === null ? undefined : BigInt(current[1] as string) })
    }
    throw e
  }
}

/** Reads the document, gives `change` a copy of its source (null when there is none) and writes
 * what it returns back only if nobody wrote in between; a missing document is created only if
 * nobody created it meanwhile. `change` returning null/undefined or the source unchanged writes
 * nothing. After `retries` lost races throws `UpdateConflict`. Answers the source as it now stands. */
export async function optimisticUpdate<T extends object> (rest: Rest, index: string, id: string,
  change: (source: T | null) => T | null | undefined | Promise<T | null | undefined>, options: UpdateOptions): Promise<T | null> {
  checkDoc(index, id)
  checkRefresh(options.refresh)
  if (typeof change !== 'function') throw new InvalidArgument(`[change] must be a function, got [${describe(change)}]`)
  const retries = options.retries ?? DEFAULT_RETRIES
  if (typeof retries !== 'number' || !Number.isInteger(retries) || retries < 0) {
    throw new InvalidArgument(`[retries] must be a whole number of at least 0, got [${describe(retries)}]`)
  }
  for (let attempt = 0; ; attempt++) {
    const { source, condition } = await read<T>(rest, index, id)
    const changed = await change(source === null ? null : structuredClone(source))
    if (changed === null || changed === undefined || isDeepStrictEqual(changed, source)) return source
    try {
      await rest.send({ method: 'PUT', path: docPath(index, id, { ...condition, refresh: options.refresh }), body: changed })
      return changed
    } catch (e) {
      if (!(e instanceof VersionConflict)) throw e
      if (attempt === retries) {
        throw new UpdateConflict(`update of [${index}/${id}] lost its race ${retries + 1} times: ${e.reason}`,
          { status: e.status, type: e.type, body: e.body, cause: e })
      }
      await sleep(backoff(attempt))
    }
  }
}

async function read<T> (rest: Rest, index: string, id: string): Promise<{ source: T | null, condition: Record<string, unknown> }> {
  let got: any
  try {
    got = await rest.send({ method: 'GET', path: docPath(index, id, {}) })
  } catch (e) {
    if (e instanceof LockError && e.status === 404) return { source: null, condition: { op_type: 'create' } }
    throw e
  }
  return { source: got._source as T, condition: { if_seq_no: got._seq_no, if_primary_term: got._primary_term } }
}
