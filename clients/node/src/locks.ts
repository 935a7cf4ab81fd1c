/**
 * `Locks`: the client, over the user's own `@elastic/elasticsearch` `Client` (every request is
 * `client.transport.request(...)`). One per application; every acquire is made by an owner of its
 * own and names an acquisition of its own, so concurrent callers sharing it exclude each other.
 */

import { randomUUID, randomBytes } from 'node:crypto'
import { hostname } from 'node:os'

import {
  AcquireAborted, ClientClosed, IllegalArgument, InvalidArgument, LockConflict, LockError,
  LockWaitTimeout, BadRequest
} from './errors'
import { HeldLock, Leadership, type Request, grantBody } from './held'
import { Holds } from './holds'
import {
  type Duration, type Mode, type Priority, type Scope, type TargetSpec, type GrantScope, MAX_SEMAPHORE_LIMIT,
  MODES, SCOPES, checkBoolean, checkChoice, checkCount, checkFunction, checkKnown, checkName, checkPriority,
  checkSignal, checkToken, checkValue, describe, optionalMillis, pathOf, target, toMillis
} from './options'
import { type ClientLike, DEFAULT_LOGGER, type Logger, Rest, WAIT_MARGIN_MS, anySignal, isAborted, millisLeft, sleep } from './rest'
import { Session, type SessionOptions } from './session'
import { type IndexOptions, type UpdateOptions, optimisticUpdate } from './documents'
import { GroupApi } from './groups'

export interface LocksOptions {
  /** Every acquire of this client under this one owner (reentrant everywhere: use it only where
   * that is what you want). Default: an owner of its own per acquisition. */
  owner?: string
  /** How long calls without a wait of their own (release, sessions, reads, groups) retry a 503
   * (default `"10s"`). */
  retryFor?: Duration
  /** The watchdog renews every `lease × renewFraction` (default 1/3). */
  renewFraction?: number
  /** How many held locks are loss-watched at once (default 16; 0: none). Each watch holds one
   * connection of the client's pool (256 per node by default). */
  lossWatches?: number
  /** Where the client logs (default: debug and info to `NODE_DEBUG=eslm`, warnings to console). */
  logger?: Partial<Logger>
}

/** Options of every acquire. */
export interface AcquireOptions {
  /** The lease (default: the server's `locks.lease.default`); renewed by the watchdog while held. */
  lease?: Duration
  /** How long to wait: absent, it waits until granted; `0` tries once (`LockConflict` when busy);
   * otherwise at most that long, then `LockWaitTimeout`. */
  timeout?: Duration
  /** Aborts a waiting acquire (`AcquireAborted`, an `AbortError`). */
  signal?: AbortSignal
  /** 0..9, `"background"` (2) or `"foreground"` (7, the default). */
  priority?: Priority
  /** The owner this grant is made under (default: one of its own). An acquire by an owner that
   * holds the lock through this client gets the same grant back (a nested handle). */
  owner?: string
  /** Acquire under this session (its lease applies; no watchdog of its own). */
  session?: Session
  /** Called once if the lock is lost while held (also: `held.signal` aborts). */
  onLost?: (held: HeldLock) => unknown
  /** false: no watchdog renews the lease, which runs out unless renewed by hand (default true). */
  watchdog?: boolean
}

export interface LockOptions extends AcquireOptions {
  mode?: Mode
  /** `"tree"`: the key is an absolute path (`/orders/eu/42`). */
  scope?: Scope
  /** If the lock ends without a release, keep its key from other owners this long (at most 1m). */
  lockDelay?: Duration
  /** While waiting, ask lower-priority holders in the way to yield within this grace. */
  preempt?: Duration
  /** Called once when a preempting waiter asks this holder to yield within `graceMs`. */
  onRevoke?: (held: HeldLock, graceMs: number) => unknown
}

export type ManyOptions = AcquireOptions

export interface SemaphoreOptions extends AcquireOptions {
  /** The semaphore's limit (1..65535); must be the one it has while in use. */
  limit: number
  /** The permits to hold (default 1). */
  permits?: number
}

export interface CampaignOptions {
  /** Who campaigns (default: a candidate of its own; under a session, the session's owner). */
  candidate?: string
  /** Published with the leadership (a string of at most 1024 bytes). */
  value?: string
  lease?: Duration
  /** Absent: wait until elected; `0`: `LockConflict` when someone leads; else at most that long. */
  timeout?: Duration
  signal?: AbortSignal
  session?: Session
  lockDelay?: Duration
  onLost?: (lead: Leadership) => unknown
  watchdog?: boolean
}

export interface LeaderLoopOptions {
  candidate?: string
  value?: string
  lease?: Duration
  /** How long each campaign waits on the server before the loop asks again (default `"10s"`). */
  roundWait?: Duration
  /** Stops the loop: the work's signal aborts, the leadership is resigned, no campaign follows. */
  signal?: AbortSignal
  onLost?: (lead: Leadership) => unknown
}

export interface WatchOptions {
  /** How long to watch (default `"30s"`). */
  wait?: Duration
  scope?: Scope
  signal?: AbortSignal
}

const ACQUIRE_OPTIONS = ['lease', 'timeout', 'signal', 'priority', 'owner', 'session', 'onLost', 'watchdog']
const LOCK_OPTIONS = [...ACQUIRE_OPTIONS, 'mode', 'scope', 'lockDelay', 'preempt', 'onRevoke']
const SEMAPHORE_OPTIONS = [...ACQUIRE_OPTIONS, 'limit', 'permits']
const CAMPAIGN_OPTIONS = ['candidate', 'value', 'lease', 'timeout', 'signal', 'session', 'lockDelay', 'onLost', 'watchdog']

/** The longest wait one acquire request asks for: the server's `locks.wait.max` (5 minutes unless
 * changed). A longer wait, or one until granted, is sent in rounds, each with the time left; a
 * cluster with a lower maximum names it in its 400, and the rounds keep to it. */
export const SERVER_WAIT_MAX_MS = 300_000
const WAIT_MAX = /\[wait\] must be at most \[([^\]]+)\] \(locks\.wait\.max\)/

/** Unique per process and per client: host, pid and 48 random bits. */
function clientIdentity (): string {
  return `${hostname()}/${process.pid}/${randomBytes(6).toString('hex')}`
}

export class Locks extends GroupApi {
  /** @internal */ readonly rest: Rest
  /** @internal */ readonly holds = new Holds()
  /** @internal */ readonly logger: Logger
  /** @internal */ readonly lossSlots: Slots
  readonly owner: string | undefined
  /** `<host>/<pid>/<random>`: the prefix of the owners this client makes. */
  readonly identity = clientIdentity()
  readonly retryForMs: number
  readonly renewFraction: number
  readonly lossWatches: number
  closed = false
  private acquisitions = 0
  private readonly live = new Set<HeldLock | Session>()
  private readonly closer = new AbortController()

  /** `new Locks(client)`: `client` is your `@elastic/elasticsearch` `Client`. */
  constructor (client: ClientLike, options: LocksOptions = {}) {
    checkKnown(options, ['owner', 'retryFor', 'renewFraction', 'lossWatches', 'logger'], 'Locks')
    if (client === null || typeof client !== 'object' || typeof client.transport?.request !== 'function') {
      throw new InvalidArgument(`[client] must be an @elastic/elasticsearch Client, got [${describe(client)}]`)
    }
    const logger = { ...DEFAULT_LOGGER, ...(options.logger ?? {}) }
    super()
    this.logger = logger
    this.rest = new Rest(client, logger)
    this.owner = options.owner === undefined ? undefined : checkName(options.owner, 'owner')
    this.retryForMs = toMillis(options.retryFor ?? '10s', 'retryFor')
    const fraction = options.renewFraction ?? 1 / 3
    if (typeof fraction !== 'number' || !(fraction > 0 && fraction < 1)) {
      throw new InvalidArgument(`[renewFraction] must be a number between 0 and 1, got [${describe(fraction)}]`)
    }
    this.renewFraction = fraction
    const watches = options.lossWatches ?? 16
    if (typeof watches !== 'number' || !Number.isInteger(watches) || watches < 0) {
      throw new InvalidArgument(`[lossWatches] must be a whole number >= 0, got [${describe(watches)}]`)
    }
    this.lossWatches = watches
    this.lossSlots = new Slots(Math.max(1, watches))
  }

  /** An owner nobody else uses: the client's owner (or identity) and a sequence number. */
  freshOwner (): string {
    return `${this.owner ?? this.identity}/${++this.acquisitions}`
  }

  /** @internal */
  checkOpen (): void {
    if (this.closed) throw new ClientClosed('this Locks is closed')
  }

  /** @internal A handle or session was let go: close() need not. */
  letGo (it: HeldLock | Session): void {
    this.live.delete(it)
  }

  // --- locks -------------------------------------------------------------------------------------

  /** Acquires `key`, **waiting until granted** unless `timeout` says otherwise (then
   * `LockWaitTimeout`; `timeout: 0`: `LockConflict` when busy). The handle is renewed by a
   * watchdog until released: `await using held = await locks.lock(key)`, or `held.release()`. */
  async lock (key: string, options: LockOptions = {}): Promise<HeldLock> {
    return await this.take(this.lockRequest(key, options))
  }

  /** One try: the handle, or **null** when the key is busy (or its grant came too late). */
  async tryLock (key: string, options: Omit<LockOptions, 'timeout'> = {}): Promise<HeldLock | null> {
    if ((options as LockOptions).timeout !== undefined) throw new InvalidArgument('[timeout] is not an option of tryLock: it tries once')
    return await this.orNull(this.take({ ...this.lockRequest(key, options), waitMs: 0 }))
  }

  /** Runs `fn(held)` holding `key` (acquired as `lock` does), then releases. Rejects with the
   * `LockLost` if the lock was lost meanwhile (`held.signal` aborted then; `blockError` holds
   * what `fn` threw, if anything); else with what `fn` threw; else with a failed release. */
  async withLock<T> (key: string, fn: (held: HeldLock) => Promise<T> | T, options: LockOptions = {}): Promise<T> {
    checkFunction(fn, 'fn')
    return await this.holding(await this.lock(key, options), fn)
  }

  /** A shared lock (`mode: "shared"`): any number of readers, no writer. */
  async readLock (key: string, options: Omit<LockOptions, 'mode'> = {}): Promise<HeldLock> {
    return await this.lock(key, { ...options, mode: 'shared' })
  }

  /** An exclusive lock (`mode: "exclusive"`): one writer, no reader. */
  async writeLock (key: string, options: Omit<LockOptions, 'mode'> = {}): Promise<HeldLock> {
    return await this.lock(key, { ...options, mode: 'exclusive' })
  }

  /** Many locks, all or nothing (`POST /_locks/_acquire`): keys or `{key, mode, scope}`. */
  async lockMany (locks: readonly TargetSpec[], options: ManyOptions = {}): Promise<HeldLock> {
    checkKnown(options, ACQUIRE_OPTIONS, 'lockMany')
    if (!Array.isArray(locks) || locks.length === 0) throw new InvalidArgument(`[locks] must be a non-empty array of keys or {key, mode, scope}, got [${describe(locks)}]`)
    return await this.take(this.request(locks.map(target), true, options))
  }

  // --- semaphores -------------------------------------------------------------------------------

  /** Holds `permits` (default 1) of semaphore `name` of `limit`, waiting as `lock` does. */
  async semaphore (name: string, options: SemaphoreOptions): Promise<HeldLock> {
    return await this.take(this.semaphoreRequest(name, options))
  }

  /** One try: the handle, or null when the permits do not fit now. */
  async trySemaphore (name: string, options: Omit<SemaphoreOptions, 'timeout'>): Promise<HeldLock | null> {
    if ((options as SemaphoreOptions)?.timeout !== undefined) throw new InvalidArgument('[timeout] is not an option of trySemaphore: it tries once')
    return await this.orNull(this.take({ ...this.semaphoreRequest(name, options), waitMs: 0 }))
  }

  /** Runs `fn(held)` holding the permits, then gives them back (as `withLock`). */
  async withSemaphore<T> (name: string, fn: (held: HeldLock) => Promise<T> | T, options: SemaphoreOptions): Promise<T> {
    checkFunction(fn, 'fn')
    return await this.holding(await this.semaphore(name, options), fn)
  }

  /** Admin: changes the limit of a semaphore in use (`POST /_semaphores/{name}/_limit`). */
  async setSemaphoreLimit (name: string, limit: number): Promise<any> {
    const body = { limit: checkCount(limit, 'limit', MAX_SEMAPHORE_LIMIT) }
    return await this.rest.simple('POST', pathOf(checkName(name, 'name'), '/_limit', 'semaphore'), body, this.retryForMs)
  }

  // --- elections --------------------------------------------------------------------------------

  /** Campaigns in election `name`, waiting until elected (unless `timeout`); the `Leadership` is
   * renewed by the watchdog, loss-watched (the election's observe of its term) and ended by
   * `resign()` (or `await using`). `lead.term` fences the leader's writes. */
  async campaign (name: string, options: CampaignOptions = {}): Promise<Leadership> {
    return await this.take(this.campaignRequest(name, options)) as Leadership
  }

  /** Runs `fn(lead)` while leading (campaigning as `campaign` does), then resigns (as `withLock`). */
  async withLeadership<T> (name: string, fn: (lead: Leadership) => Promise<T> | T, options: CampaignOptions = {}): Promise<T> {
    checkFunction(fn, 'fn')
    return await this.holding(await this.campaign(name, options), fn as (h: HeldLock) => Promise<T> | T)
  }

  /** Election `name`'s state: `leader` (null when none), `value`, `term` (0n: none), `lease_ms`,
   * `candidates`. */
  async election (name: string): Promise<any> {
    return await this.rest.simple('GET', pathOf(checkName(name, 'name'), '', 'election'), undefined, this.retryForMs)
  }

  /** Waits at most `wait` (default 30s) until election `name`'s term is not `term` (0: no leader
   * known, so it waits for the first): the state with `changed: true`, or `changed: false`. */
  async observe (name: string, options: { term?: bigint | number, wait?: Duration, signal?: AbortSignal } = {}): Promise<any> {
    checkKnown(options, ['term', 'wait', 'signal'], 'observe')
    checkName(name, 'name')
    const term = checkToken(options.term ?? 0n, 'term', true)
    const waitMs = toMillis(options.wait ?? '30s', 'wait')
    const signal = checkSignal(options.signal)
    return await this.rest.retrying(deadline => ({
      method: 'GET',
      path: pathOf(name, `/_observe?term=${term}&wait=${millisLeft(deadline)}ms`, 'election'),
      timeoutMs: millisLeft(deadline) + WAIT_MARGIN_MS
    }), performance.now() + waitMs, signal)
  }

  /** A leader loop: campaigns in rounds of `roundWait`, runs `work(lead, signal)` while leader
   * (`signal` aborts when the leadership is lost or the loop is stopped), resigns when the work
   * returns, and campaigns again until `options.signal` aborts. Work that throws while still leader
   * ends the loop with its error; a refused campaign (400) ends it at once. Answers the terms led. */
  async runAsLeader (name: string, work: (lead: Leadership, signal: AbortSignal) => Promise<unknown> | unknown,
    options: LeaderLoopOptions = {}): Promise<bigint[]> {
    checkKnown(options, ['candidate', 'value', 'lease', 'roundWait', 'signal', 'onLost'], 'runAsLeader')
    checkFunction(work, 'work')
    const stop = checkSignal(options.signal)
    const roundWait = toMillis(options.roundWait ?? '10s', 'roundWait')
    if (roundWait === 0) throw new InvalidArgument('[roundWait] must be longer than zero: a round that never waits would poll the server')
    const candidate = options.candidate === undefined ? this.freshOwner() : checkName(options.candidate, 'candidate')
    const terms: bigint[] = []
    while (!isAborted(stop)) {
      let lead: Leadership
      try {
        lead = await this.campaign(name, {
          candidate, value: options.value, lease: options.lease, timeout: roundWait, signal: stop, onLost: options.onLost
        })
      } catch (e) {
        if (e instanceof LockWaitTimeout || e instanceof LockConflict) continue
        if (e instanceof AcquireAborted || e instanceof BadRequest || e instanceof InvalidArgument) {
          if (isAborted(stop)) break
          throw e
        }
        if (!(e instanceof LockError)) throw e
        this.logger.warn(`campaign of [${candidate}] in [${name}] failed, again in 1 s: ${e.message}`)
        try { await sleep(1000, stop) } catch { break }
        continue
      }
      if (lead.lost || lead.leaseLeftMs() <= 0 || isAborted(stop)) {
        await lead.close()
        continue
      }
      terms.push(lead.term)
      const both = anySignal(stop === undefined ? [lead.signal] : [lead.signal, stop])
      const signal = both.signal
      let failure: unknown
      let failed = false
      try {
        await work(lead, signal)
      } catch (e) {
        failed = true
        failure = e
      }
      const stopping = signal.aborted
      both.dispose()
      const error = await lead.close()
      if (error !== undefined && !lead.lost) this.logger.warn(`resigning ${lead} failed (its lease ends it): ${String(error)}`)
      if (failed && !stopping) throw failure
    }
    return terms
  }

  // --- sessions ---------------------------------------------------------------------------------

  /** Creates a session (`POST /_locks/_session`), kept alive in the background until `end()`:
   * `await using s = await locks.session({ttl: "30s"})`, then `s.lock(key)`. */
  async session (options: SessionOptions = {}): Promise<Session> {
    checkKnown(options, ['ttl', 'routing', 'onLost'], 'session')
    this.checkOpen()
    const ttl = optionalMillis(options.ttl, 'ttl')
    const routing = options.routing === undefined ? undefined : checkName(options.routing, 'routing')
    const onLost = checkFunction<(s: Session) => unknown>(options.onLost, 'onLost')
    const owner = this.owner ?? this.freshOwner()
    const started = performance.now()
    const answer = await this.rest.simple('POST', '/_locks/_session', { owner, ttl, routing }, this.retryForMs)
    const session = new Session(this, owner, answer, started, onLost)
    this.live.add(session)
    if (this.closed) {
      await session.close()
      throw new ClientClosed('this Locks was closed while the session was created')
    }
    session.start()
    return session
  }

  /** Runs `fn(session)` in a session, then ends it (which releases its locks). Rejects with
   * `SessionLost` if the session was lost meanwhile. */
  async withSession<T> (fn: (session: Session) => Promise<T> | T, options: SessionOptions = {}): Promise<T> {
    checkFunction(fn, 'fn')
    const session = await this.session(options)
    let result: T | undefined
    let failure: unknown
    let failed = false
    try {
      result = await fn(session)
    } catch (e) {
      failed = true
      failure = e
    }
    const closeError = await session.close()
    if (session.lost) {
      const lost = session.lostError as NonNullable<typeof session.lostError>
      if (failed) lost.blockError = failure
      throw lost
    }
    if (failed) throw failure
    if (closeError !== undefined) throw closeError
    return result as T
  }

  // --- reading and administration -----------------------------------------------------------------

  /** Holders and waiters of `key` (`GET /_locks/{key}`; `scope: "semaphore"`: the semaphore's
   * limit, holders and waiters). Tokens are bigint. */
  async get (key: string, options: { scope?: Scope | 'semaphore' } = {}): Promise<any> {
    checkKnown(options, ['scope'], 'get')
    const scope = checkChoice(options.scope ?? 'key', 'scope', [...SCOPES, 'semaphore'] as const)
    return await this.stateOf(checkName(key, 'key'), scope)
  }

  /** @internal */
  async stateOf (key: string, scope: GrantScope): Promise<any> {
    const path = scope === 'semaphore' || scope === 'election' ? pathOf(key, '', scope) : pathOf(key, `?scope=${scope}`)
    return await this.rest.simple('GET', path, undefined, this.retryForMs)
  }

  /** Whether anyone holds `key` now (intention locks of a tree do not count). */
  async locked (key: string, options: { scope?: Scope | 'semaphore' } = {}): Promise<boolean> {
    const state = await this.get(key, options)
    return (state.holders ?? []).some((h: any) => h.intention !== true)
  }

  /** Waits at most `wait` (default 30s) until the lock of `key` with fencing token `token` ends
   * (`GET /_locks/{key}/_watch`): `{changed: true, reason}` or `{changed: false, held: true}`. */
  async watch (key: string, token: bigint | number, options: WatchOptions = {}): Promise<any> {
    checkKnown(options, ['wait', 'scope', 'signal'], 'watch')
    checkName(key, 'key')
    const t = checkToken(token, 'token')
    const scope = checkChoice(options.scope ?? 'key', 'scope', SCOPES)
    const waitMs = toMillis(options.wait ?? '30s', 'wait')
    const signal = checkSignal(options.signal)
    return await this.rest.retrying(deadline => ({
      method: 'GET',
      path: pathOf(key, `/_watch?token=${t}&wait=${millisLeft(deadline)}ms&scope=${scope}`),
      timeoutMs: millisLeft(deadline) + WAIT_MARGIN_MS
    }), performance.now() + waitMs, signal)
  }

  /** Admin: evicts every holder of `key` (`POST /_locks/{key}/_force_release`); `scope` may be
   * `"semaphore"` or `"election"` too. Answers `{released: [{owner, fencing_token}]}`. */
  async forceRelease (key: string, options: { scope?: GrantScope, reason?: string } = {}): Promise<any> {
    checkKnown(options, ['scope', 'reason'], 'forceRelease')
    checkName(key, 'key')
    const scope = checkChoice(options.scope ?? 'key', 'scope', ['key', 'tree', 'semaphore', 'election'] as const)
    const body: Record<string, unknown> = { scope }
    if (options.reason !== undefined) body.reason = String(options.reason)
    return await this.rest.simple('POST', pathOf(key, '/_force_release'), body, this.retryForMs)
  }

  /** Changes document `index/_doc/id` without a lock (docs/API.md "Fenced writes and optimistic
   * updates"): `change(source)` gets a copy of its source (null when none) and answers the new one;
   * written only if nobody wrote in between (`if_seq_no`/`if_primary_term`), else read and
   * applied again, at most `retries` (10) times more, then `UpdateConflict`. Answering
   * null/undefined or the source unchanged writes nothing. Answers the source as it now stands. */
  async optimisticUpdate<T extends object> (index: string, id: string,
    change: (source: T | null) => T | null | undefined | Promise<T | null | undefined>, options: UpdateOptions = {}): Promise<T | null> {
    checkKnown(options, ['retries', 'refresh'], 'optimisticUpdate')
    return await optimisticUpdate(this.rest, index, id, change, options)
  }

  // --- closing ----------------------------------------------------------------------------------

  /** Releases every lock and ends every session this client still holds (failures logged: such a
   * lock ends with its lease), aborts the acquires still waiting (`ClientClosed`), and stops every
   * watchdog and watch. Afterwards every acquire throws `ClientClosed`. The `Client` stays yours. */
  async close (): Promise<void> {
    if (this.closed) return
    this.closed = true
    this.closer.abort(new ClientClosed('this Locks was closed'))
    const sessions = [...this.live].filter((it): it is Session => it instanceof Session)
    await Promise.all(sessions.map(async s => { this.report(s, await s.close()) }))
    const held = [...this.live].filter((it): it is HeldLock => it instanceof HeldLock)
    await Promise.all(held.map(async h => { this.report(h, await h.close()) }))
  }

  async [Symbol.asyncDispose] (): Promise<void> {
    await this.close()
  }

  private report (it: HeldLock | Session, error: unknown): void {
    if (error !== undefined) this.logger.warn(`closing: ${it} not let go cleanly: ${String(error)}`)
  }

  // --- acquiring ------------------------------------------------------------------------------

  private async holding<T> (held: HeldLock, fn: (held: HeldLock) => Promise<T> | T): Promise<T> {
    let result: T | undefined
    let failure: unknown
    let failed = false
    try {
      result = await fn(held)
    } catch (e) {
      failed = true
      failure = e
    }
    const closeError = await held.close()
    if (held.lost) {
      const lost = held.lostError as NonNullable<typeof held.lostError>
      if (failed) lost.blockError = failure
      throw lost
    }
    if (failed) throw failure
    if (closeError !== undefined) throw closeError
    return result as T
  }

  private async orNull (taking: Promise<HeldLock>): Promise<HeldLock | null> {
    try {
      return await taking
    } catch (e) {
      if (e instanceof LockConflict) return null
      throw e
    }
  }

  private lockRequest (key: string, options: LockOptions): Request {
    checkKnown(options, LOCK_OPTIONS, 'lock')
    const t = { key: checkName(key, 'key'), mode: checkChoice(options.mode ?? 'exclusive', 'mode', MODES), scope: checkChoice(options.scope ?? 'key', 'scope', SCOPES) }
    const request = this.request([t], false, options)
    request.lockDelayMs = optionalMillis(options.lockDelay, 'lockDelay')
    request.preemptMs = optionalMillis(options.preempt, 'preempt')
    request.onRevoke = checkFunction(options.onRevoke, 'onRevoke')
    return request
  }

  private semaphoreRequest (name: string, options: SemaphoreOptions): Request {
    if (options === null || typeof options !== 'object') throw new InvalidArgument('[limit] is required: semaphore(name, {limit})')
    checkKnown(options, SEMAPHORE_OPTIONS, 'semaphore')
    const limit = checkCount(options.limit, 'limit', MAX_SEMAPHORE_LIMIT)
    const permits = checkCount(options.permits ?? 1, 'permits', limit)
    const request = this.request([{ key: checkName(name, 'name'), mode: 'exclusive', scope: 'semaphore' }], false, options)
    request.limit = limit
    request.permits = permits
    return request
  }

  private campaignRequest (name: string, options: CampaignOptions): Request {
    checkKnown(options, CAMPAIGN_OPTIONS, 'campaign')
    if (options.candidate !== undefined && options.session !== undefined) {
      throw new InvalidArgument('[candidate] cannot be given with a session: the session\'s owner campaigns')
    }
    const { candidate, value, lockDelay, ...rest } = options
    const request = this.request([{ key: checkName(name, 'name'), mode: 'exclusive', scope: 'election' }], false,
      { ...rest, owner: candidate === undefined ? undefined : checkName(candidate, 'candidate') } as AcquireOptions)
    request.value = checkValue(value)
    request.lockDelayMs = optionalMillis(lockDelay, 'lockDelay')
    return request
  }

  private request (targets: Request['targets'], multi: boolean, options: AcquireOptions): Request {
    const session = options.session
    if (session !== undefined && !(session instanceof Session)) throw new InvalidArgument(`[session] must be a Session of this client, got [${describe(session)}]`)
    if (session !== undefined && options.owner !== undefined) throw new InvalidArgument('[owner] cannot be given with a session: the session\'s owner holds its locks')
    if (session !== undefined && (session as Session)['locks'] !== this) throw new InvalidArgument('[session] is a session of another Locks')
    return {
      targets,
      multi,
      leaseMs: optionalMillis(options.lease, 'lease'),
      waitMs: optionalMillis(options.timeout, 'timeout'),
      priority: checkPriority(options.priority),
      session,
      onLost: checkFunction(options.onLost, 'onLost'),
      owner: options.owner === undefined ? undefined : checkName(options.owner, 'owner'),
      signal: checkSignal(options.signal),
      watchdog: checkBoolean(options.watchdog, 'watchdog') ?? true
    }
  }

  /** Acquires what `request` asks for under its owner and a fresh acquisition (or the one this
   * client already holds the lock under for that owner: a nested acquire), hands the grant over
   * only if its lease is safely left, and starts its watchdog. */
  private async take (request: Request): Promise<HeldLock> {
    this.checkOpen()
    request.owner = request.owner ?? request.session?.owner ?? this.owner ?? this.freshOwner()
    const held = this.holds.acquisitionOf(request.owner, request.targets)
    request.acquisition = held ?? randomUUID()
    if (isAborted(request.signal)) throw new AcquireAborted('the acquire was aborted by its signal before it was sent', request.signal?.reason)
    const both = anySignal(request.signal === undefined ? [this.closer.signal] : [request.signal, this.closer.signal])
    const started = performance.now()
    let answer: any
    try {
      answer = await this.acquireAnswer({ ...request, signal: both.signal })
    } catch (e) {
      if (e instanceof AcquireAborted) {
        if (held === undefined) void this.withdraw(request)
        if (this.closer.signal.aborted && !isAborted(request.signal)) throw new ClientClosed('this Locks was closed while the acquire waited')
      }
      throw e
    } finally {
      both.dispose()
    }
    const handle = request.targets[0]?.scope === 'election'
      ? new Leadership(this, request, answer, started)
      : new HeldLock(this, request, answer, started)
    await handle.arrive()
    if (this.closed) {
      await handle.close()
      throw new ClientClosed('this Locks was closed while the acquire waited')
    }
    this.live.add(handle)
    handle.start()
    return handle
  }

  /** After an aborted acquire: the server drops the waiter when the request's connection closes,
   * but may have granted it in the same instant; a release naming the acquisition (new, so it can
   * name nothing else) ends such a grant. Best effort: a grant it misses ends with its lease. */
  private async withdraw (request: Request): Promise<void> {
    const t = request.targets[0] as Request['targets'][number]
    try {
      if (request.multi) {
        const locks = request.targets.map(x => ({ key: x.key, scope: x.scope }))
        await this.rest.simple('POST', '/_locks/_release', { owner: request.owner, locks, acquisition: request.acquisition }, this.retryForMs)
      } else {
        const body = grantBody(request.owner as string, { key: t.key, mode: t.mode, scope: t.scope, fencingToken: 0n }, request.acquisition)
        if (t.scope === 'election') delete body.term
        else delete body.fencing_token
        await this.rest.simple('POST', pathOf(t.key, '/_release', t.scope), body, this.retryForMs)
        this.logger.info(`released ${t.key}: granted as its acquire was aborted`)
      }
    } catch (e) {
      this.logger.debug(`withdrawing the aborted acquire of ${t.key}: ${(e as Error).message}`)
    }
  }

  /** The grant's answer, waiting at most `request.waitMs` (undefined: until granted). Each request
   * queues for at most the server's `locks.wait.max`; when that runs out with time left, it is
   * sent again (same acquisition) with what is left. 503s are retried within what is left too. */
  private async acquireAnswer (request: Request): Promise<any> {
    const deadline = request.waitMs === undefined ? Infinity : performance.now() + request.waitMs
    let capMs = SERVER_WAIT_MAX_MS
    for (;;) {
      try {
        return await this.rest.retrying(roundDeadline => {
          const left = millisLeft(roundDeadline)
          return {
            method: 'POST',
            path: request.multi ? '/_locks/_acquire' : pathOf((request.targets[0] as Request['targets'][number]).key, '/_acquire', (request.targets[0] as Request['targets'][number]).scope),
            body: acquireBody(request, left),
            timeoutMs: left > 0 ? left + WAIT_MARGIN_MS : undefined
          }
        }, Math.min(deadline, performance.now() + capMs), request.signal)
      } catch (e) {
        if (e instanceof LockWaitTimeout) {
          if (deadline - performance.now() < 1) throw e
          this.logger.debug(`acquire of ${request.targets[0]?.key}: the server's wait ran out, sending it again`)
          continue
        }
        if (e instanceof IllegalArgument) {
          const found = WAIT_MAX.exec(e.reason)
          const lower = found === null ? undefined : toMillis(found[1], 'locks.wait.max')
          if (lower === undefined || lower >= capMs) throw e
          capMs = lower
          continue
        }
        throw e
      }
    }
  }
}

/** The acquire body (docs/API.md "Single keys", "Many keys", "Semaphores", "Elections"). */
function acquireBody (r: Request, waitMs: number): Record<string, unknown> {
  const t = r.targets[0] as Request['targets'][number]
  let body: Record<string, unknown>
  if (t.scope === 'election') {
    body = { candidate: r.owner, value: r.value }
  } else if (r.multi) {
    body = { owner: r.owner, locks: r.targets.map(x => ({ key: x.key, mode: x.mode, scope: x.scope })) }
  } else if (t.scope === 'semaphore') {
    body = { owner: r.owner, permits: r.permits, limit: r.limit }
  } else {
    body = { owner: r.owner, mode: t.mode, scope: t.scope }
  }
  Object.assign(body, {
    wait: waitMs,
    lease: r.leaseMs,
    priority: r.priority,
    session: r.session?.id,
    lock_delay: r.lockDelayMs,
    preempt: r.preemptMs,
    acquisition: r.acquisition
  })
  for (const k of Object.keys(body)) if (body[k] === undefined) delete body[k]
  return body
}

/** At most `size` holders at once (the loss watches). */
export class Slots {
  private free: number
  private readonly queue: Array<() => void> = []

  constructor (size: number) {
    this.free = size
  }

  /** A slot's release function, or undefined if `signal` aborted first. */
  async take (signal: AbortSignal): Promise<(() => void) | undefined> {
    if (signal.aborted) return undefined
    if (this.free > 0) {
      this.free--
      return this.releaser()
    }
    return await new Promise(resolve => {
      const granted = (): void => {
        signal.removeEventListener('abort', gone)
        resolve(this.releaser())
      }
      const gone = (): void => {
        const at = this.queue.indexOf(granted)
        if (at >= 0) this.queue.splice(at, 1)
        resolve(undefined)
      }
      this.queue.push(granted)
      signal.addEventListener('abort', gone, { once: true })
    })
  }

  private releaser (): () => void {
    let done = false
    return () => {
      if (done) return
      done = true
      const next = this.queue.shift()
      if (next !== undefined) next()
      else this.free++
    }
  }
}

export type { IndexOptions }
