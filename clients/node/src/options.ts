/**
 * What a request asks for, checked before it is sent (docs/API.md "Conventions": keys and owners,
 * durations, modes, scopes, priorities): every bad option is refused here with `InvalidArgument`
 * naming it, and nothing is sent.
 */

import { InvalidArgument } from './errors'

/** A duration: an Elasticsearch time value (`"500ms"`, `"30s"`, `"1m"`) or a number of
 * milliseconds (as `setTimeout` takes). Sent as whole milliseconds. */
export type Duration = string | number

/** 0 (lowest) to 9, `"background"` (2) or `"foreground"` (7, the server's default). */
export type Priority = number | 'background' | 'foreground'

export type Mode = 'exclusive' | 'shared'
export type Scope = 'key' | 'tree'
/** The scope of a grant: a lock's, a semaphore's, a leadership's. */
export type GrantScope = Scope | 'semaphore' | 'election'

export const MODES: readonly Mode[] = ['exclusive', 'shared']
export const SCOPES: readonly Scope[] = ['key', 'tree']
export const MAX_NAME_BYTES = 512
export const MAX_VALUE_BYTES = 1024
export const MAX_SEMAPHORE_LIMIT = 65535

const UNIT_MS: Record<string, number> = { nanos: 1e-6, micros: 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }
const TIME_VALUE = /^(\d+(?:\.\d+)?)(nanos|micros|ms|s|m|h|d)$/

/** `value` in whole milliseconds (a positive fraction of one counts as 1, so a short wait never
 * becomes "do not wait"); `InvalidArgument` naming `name` for anything else. */
export function toMillis (value: unknown, name: string): number {
  let ms: number
  if (typeof value === 'number') {
    ms = value
  } else if (typeof value === 'string') {
    const match = TIME_VALUE.exec(value.trim())
    if (match === null) {
      throw new InvalidArgument(`[${name}] is not a duration: [${value}] (use a number of milliseconds, or a number and a unit: 500ms, 30s, 1m, 2h)`)
    }
    ms = Number(match[1]) * (UNIT_MS[match[2]] as number)
  } else {
    throw new InvalidArgument(`[${name}] must be a duration ("30s", or milliseconds as a number), got [${describe(value)}]`)
  }
  if (!Number.isFinite(ms) || ms < 0) {
    throw new InvalidArgument(`[${name}] must be a finite duration >= 0, got [${describe(value)}]`)
  }
  return Math.ceil(ms)
}

/** `toMillis`, passing undefined (and null) through: the server's default applies. */
export function optionalMillis (value: unknown, name: string): number | undefined {
  return value === undefined || value === null ? undefined : toMillis(value, name)
}

export function describe (value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value)
  if (typeof value === 'bigint') return `${value}n`
  if (typeof value === 'function') return 'a function'
  try {
    return String(JSON.stringify(value) ?? value)
  } catch {
    return String(value)
  }
}

/** A key, owner or name: a non-empty string of at most 512 bytes of UTF-8 (the server checks the
 * rest, control characters, with 400 `illegal_argument_exception`). */
export function checkName (value: unknown, name: string): string {
  if (typeof value !== 'string' || value === '') {
    throw new InvalidArgument(`[${name}] must be a non-empty string, got [${describe(value)}]`)
  }
  if (Buffer.byteLength(value, 'utf8') > MAX_NAME_BYTES) {
    throw new InvalidArgument(`[${name}] must be at most ${MAX_NAME_BYTES} bytes (UTF-8)`)
  }
  return value
}

export function checkChoice<T extends string> (value: unknown, name: string, choices: readonly T[]): T {
  if (!choices.includes(value as T)) {
    throw new InvalidArgument(`[${name}] must be one of ${choices.join(', ')}; got [${describe(value)}]`)
  }
  return value as T
}

export function checkPriority (value: unknown): Priority | undefined {
  if (value === undefined || value === null) return undefined
  if (value === 'background' || value === 'foreground') return value
  if (typeof value === 'number' && Number.isInteger(value) && value >= 0 && value <= 9) return value
  throw new InvalidArgument(`[priority] must be 0..9, background or foreground; got [${describe(value)}]`)
}

/** A semaphore's `limit` or `permits`: an integer 1..`most`. */
export function checkCount (value: unknown, name: string, most: number): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > most) {
    throw new InvalidArgument(`[${name}] must be an integer 1..${most}, got [${describe(value)}]`)
  }
  return value
}

export function checkBoolean (value: unknown, name: string): boolean | undefined {
  if (value === undefined) return undefined
  if (typeof value !== 'boolean') throw new InvalidArgument(`[${name}] must be true or false, got [${describe(value)}]`)
  return value
}

export function checkFunction<T> (value: unknown, name: string): T | undefined {
  if (value === undefined || value === null) return undefined
  if (typeof value !== 'function') throw new InvalidArgument(`[${name}] must be a function, got [${describe(value)}]`)
  return value as T
}

export function checkSignal (value: unknown, name = 'signal'): AbortSignal | undefined {
  if (value === undefined || value === null) return undefined
  if (!(value instanceof AbortSignal)) throw new InvalidArgument(`[${name}] must be an AbortSignal, got [${describe(value)}]`)
  return value
}

/** A leader's published value: undefined, or a string of at most 1024 bytes of UTF-8. */
export function checkValue (value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined
  if (typeof value !== 'string') throw new InvalidArgument(`[value] must be a string, got [${describe(value)}]`)
  const size = Buffer.byteLength(value, 'utf8')
  if (size > MAX_VALUE_BYTES) throw new InvalidArgument(`[value] must be at most ${MAX_VALUE_BYTES} bytes (UTF-8), got ${size}`)
  return value
}

/** A fencing token (or term) given by a caller: a positive whole number, as a bigint or a safe
 * integer number. */
export function checkToken (value: unknown, name: string, zeroAllowed = false): bigint {
  if (typeof value === 'bigint' && (value > 0n || (zeroAllowed && value === 0n))) return value
  if (typeof value === 'number' && Number.isSafeInteger(value) && (value > 0 || (zeroAllowed && value === 0))) return BigInt(value)
  throw new InvalidArgument(`[${name}] must be a ${zeroAllowed ? 'whole number >= 0' : 'positive whole number'} (a bigint, or a safe integer), got [${describe(value)}]`)
}

/** Refuses the options not in `known`: a misspelt option is an error, never ignored. */
export function checkKnown (options: object | undefined, known: readonly string[], what: string): void {
  if (options === undefined || options === null) return
  if (typeof options !== 'object') throw new InvalidArgument(`[options] of ${what} must be an object, got [${describe(options)}]`)
  for (const name of Object.keys(options)) {
    if (!known.includes(name)) {
      throw new InvalidArgument(`[${name}] is not an option of ${what}; its options are ${known.join(', ')}`)
    }
  }
}

/** One lock of a request: a key, its mode and scope. */
export interface Target {
  readonly key: string
  readonly mode: Mode
  readonly scope: GrantScope
}

/** A key, or `{key, mode?, scope?}`, as `lockMany` takes them. */
export type TargetSpec = string | { key: string, mode?: Mode, scope?: Scope }

export function target (spec: unknown): Target {
  if (typeof spec === 'string') return { key: checkName(spec, 'key'), mode: 'exclusive', scope: 'key' }
  if (spec !== null && typeof spec === 'object' && !Array.isArray(spec)) {
    checkKnown(spec, ['key', 'mode', 'scope'], 'an entry of [locks]')
    const s = spec as { key?: unknown, mode?: unknown, scope?: unknown }
    return {
      key: checkName(s.key, 'key'),
      mode: checkChoice(s.mode ?? 'exclusive', 'mode', MODES),
      scope: checkChoice(s.scope ?? 'key', 'scope', SCOPES)
    }
  }
  throw new InvalidArgument(`[locks] entries are keys or {key, mode, scope} objects, got [${describe(spec)}]`)
}

const BASE_PATHS: Record<GrantScope, string> = { key: '/_locks/', tree: '/_locks/', semaphore: '/_semaphores/', election: '/_elections/' }
const ELECTION_ACTIONS: Record<string, string> = { '/_acquire': '/_campaign', '/_release': '/_resign' }

/** `/_locks/{key}` (`/_semaphores/{name}`, `/_elections/{name}`, whose acquire is `_campaign`
 * and release `_resign`), the key one URL path segment (`/` as `%2F`), then `action`. */
export function pathOf (key: string, action = '', scope: GrantScope = 'key'): string {
  if (scope === 'election') action = ELECTION_ACTIONS[action] ?? action
  return `${BASE_PATHS[scope]}${encodeURIComponent(key)}${action}`
}
