/**
 * A held lock: its grants and fencing token, the lease watchdog, the loss watch, release, and the
 * lost-lock signal (`held.signal`, an `AbortSignal` aborted with the `LockLost` when the lock is
 * lost). The same rules as the Python client's `eslm/held.py`:
 *
 * - The lease is counted from when the acquire was sent plus the server's `waited_ms`, never from
 *   when the answer arrived; a grant whose first renewal is already due when its answer arrives is
 *   renewed before it is handed over, or not handed over at all (`GrantExpired`).
 * - The watchdog renews every `lease × renewFraction` with the grant's token and acquisition; a
 *   renewal answered 404 is a loss, and so are renewals failing (503s beyond their retries, no
 *   answer) until the lease has run out, and a lease that runs out on this client's clock with no
 *   renewal in between (a renewal that hangs never reports a loss by itself).
 * - A loss watch long-polls `GET /_locks/{key}/_watch` (a leadership: the election's `_observe`
 *   of its term), so a lock the server ends is lost within a round trip.
 * - The release names owner, token and acquisition, so a late release never ends a newer grant;
 *   a release that finds the grant gone is a loss.
 *
 * Timers are unref'd: a held lock's renewals never keep the process alive by themselves.
 */

import type { Locks } from './locks'
import type { Session } from './session'
import {
  GrantExpired, InvalidArgument, LockError, LockLost, LockNotHeld, BadRequest
} from './errors'
import { type Mode, type GrantScope, type Priority, type Target, checkKnown as checkKnownOptions, toMillis, pathOf } from './options'
import { WAIT_MARGIN_MS, millisLeft, sleep } from './rest'
import { fencedIndex, type IndexOptions } from './documents'
import * as fenced from './fenced'
import type { Fence, FencedChange, FencedChangeOf, FencedOptions, FencedResult, ModifyFn } from './fenced'

/** One granted lock: what the server answered for one key. */
export interface Grant {
  readonly key: string
  readonly mode: Mode | undefined
  readonly scope: GrantScope
  readonly fencingToken: bigint
}

/** Everything one acquire asks for, checked (locks.ts builds it). */
export interface Request {
  targets: Target[]
  multi: boolean
  leaseMs?: number
  /** How long to wait: undefined waits until granted, 0 tries once. */
  waitMs?: number
  priority?: Priority
  session?: Session
  onLost?: (held: HeldLock) => unknown
  onRevoke?: (held: HeldLock, graceMs: number) => unknown
  permits?: number
  limit?: number
  owner?: string
  acquisition?: string
  value?: string
  lockDelayMs?: number
  preemptMs?: number
  signal?: AbortSignal
  /** false: no watchdog renews the lease (it runs out unless renewed by hand). */
  watchdog: boolean
}

/** Something held that can be lost (a lock, a session): `lost` turns true once, `lostError` is
 * then the `LockLost`, `signal` aborts with it, and `onLost` is called. */
export abstract class Losable {
  lost = false
  lostError: LockLost | undefined = undefined
  protected closing = false
  protected readonly controller = new AbortController()

  constructor (protected readonly locks: Locks) {}

  /** Aborted, with the `LockLost` as its reason, the moment this is known lost. Hand it to the
   * work the lock protects (`fetch(url, {signal: held.signal})`) to stop it then. */
  get signal (): AbortSignal {
    return this.controller.signal
  }

  /** Whether its watchdog (or keep-alive) should go on. */
  watching (): boolean {
    return !this.lost && !this.closing
  }

  protected abstract letGo (): boolean

  /** Marks it lost unless it already is or was let go; returns whether this call did. */
  protected markLost (error: LockLost): boolean {
    if (this.lost || this.letGo()) return false
    this.lost = true
    this.lostError = error
    this.locks.logger.warn(error.message)
    this.controller.abort(error)
    return true
  }

  protected callBack<T> (callback: ((it: T) => unknown) | undefined, it: T): void {
    if (callback === undefined) return
    try {
      const result = callback(it)
      if (result instanceof Promise) result.catch((e: unknown) => this.locks.logger.warn(`onLost callback failed: ${String(e)}`))
    } catch (e) {
      this.locks.logger.warn(`onLost callback failed: ${String(e)}`)
    }
  }
}

/** A held lock (or the locks of one multi-lock, or a semaphore's permits). `await using held =
 * await locks.lock(key)` releases it at the end of the block; `held.release()` does it by hand. */
export class HeldLock extends Losable {
  readonly owner: string
  readonly acquisition: string | undefined
  /** The grants held: one per key (a multi-lock's several). */
  get grants (): readonly Grant[] {
    return this.grantList
  }
  private grantList: readonly Grant[]
  /** Milliseconds of lease the server granted (or last renewed). */
  leaseMs: number
  /** How long the request queued on the server. */
  readonly waitedMs: number
  /** The permits held (a semaphore's grant only). */
  readonly permits: number | undefined
  /** The permits of the limit nobody held just after this grant (a semaphore's grant only). */
  readonly remaining: number | undefined
  readonly session: Session | undefined
  /** Whether this handle shares a grant an outer handle of this client holds (a nested acquire
   * by the same owner): it has no watchdog and its release releases nothing. */
  readonly nested: boolean
  released = false
  /** Set when a preempting waiter asked this holder to yield (with `onRevoke`). */
  revokeGraceMs: number | undefined = undefined
  /** @internal */
  readonly request: Request
  private readonly grantedAt: number
  private leaseEnd: number
  private handedOver = false
  private renewTimer: NodeJS.Timeout | undefined
  private guardTimer: NodeJS.Timeout | undefined
  private readonly watches = new AbortController()
  private readonly nestedHandles = new Set<HeldLock>()

  /** @internal */
  constructor (locks: Locks, request: Request, answer: any, started: number) {
    super(locks)
    this.request = request
    this.owner = request.owner as string
    this.acquisition = request.acquisition
    this.grantList = grantsOf(request, answer)
    this.leaseMs = Number(answer.lease_ms)
    this.waitedMs = Number(answer.waited_ms ?? 0)
    this.permits = answer.permits
    this.remaining = answer.remaining
    this.session = request.session
    const outer = locks.holds.enter(this.owner, this.grants, answer.reentrant === true, this.acquisition, this)
    this.nested = outer !== undefined
    if (outer !== undefined) outer.nestedHandles.add(this)
    this.grantedAt = started + this.waitedMs
    this.leaseEnd = this.grantedAt + this.leaseMs
    if (this.session !== undefined) this.session.adopt(this)
  }

  /** The (first) key. */
  get key (): string {
    return (this.grants[0] as Grant).key
  }

  get keys (): string[] {
    return this.grants.map(g => g.key)
  }

  get scope (): GrantScope {
    return (this.grants[0] as Grant).scope
  }

  get mode (): Mode | undefined {
    return (this.grants[0] as Grant).mode
  }

  /** The grant's fencing token (a multi-lock's largest): write it as the external version of what
 * the lock protects (docs/API.md "The fencing recipe"). A `bigint`: tokens are 63-bit. */
  get fencingToken (): bigint {
    return this.grants.reduce((most, g) => g.fencingToken > most ? g.fencingToken : most, 0n)
  }

  /** Each key's token (a multi-lock's keys may differ). */
  get tokens (): Map<string, bigint> {
    return new Map(this.grants.map(g => [g.key, g.fencingToken]))
  }

  /** Milliseconds left of the lease as this client counts it (it ends no later on the server). */
  leaseLeftMs (): number {
    return this.leaseEnd - performance.now()
  }

  override toString (): string {
    const state = this.lost ? 'lost' : this.released ? 'released' : 'held'
    return `HeldLock(${this.keys.join(',')} token=${this.fencingToken} owner=${this.owner} ${state})`
  }

  /** Whether a watchdog renews it: not under a session (its keep-alive does), not nested, and not
   * turned off. */
  get watched (): boolean {
    return this.session === undefined && !this.nested && this.request.watchdog
  }

  protected letGo (): boolean {
    return this.released
  }

  renewIntervalMs (): number {
    return this.leaseMs * this.locks.renewFraction
  }

  /** Marks the lock lost (once), aborts `signal`, calls `onLost(held)`. */
  lose (reason: string, cause?: unknown): void {
    const error = new LockLost(`lock [${this.keys.join(', ')}] of [${this.owner}] was lost: ${reason}`, this, cause)
    if (this.markLost(error)) {
      this.stopWatching()
      this.lostNow()
      for (const handle of this.nestedHandles) handle.lose(reason, error)
      this.callBack(this.request.onLost as ((h: HeldLock) => unknown) | undefined, this)
    }
  }

  /** Runs once at the loss, before `onLost`. */
  protected lostNow (): void {}

  // --- renewal ---------------------------------------------------------------------------------

  /** Renews every grant now for `lease` (default: the lease it was acquired with); a grant found
   * gone is a loss (and throws `LockNotHeld`). The watchdog does this by itself. */
  async renew (lease?: string | number): Promise<void> {
    const leaseMs = lease === undefined ? this.request.leaseMs : toMillis(lease, 'lease')
    for (const g of this.grants) {
      const started = performance.now()
      const body = grantBody(this.owner, g, this.acquisition)
      if (leaseMs !== undefined) body.lease = leaseMs
      const call = { method: 'POST', path: pathOf(g.key, '/_renew', g.scope), body }
      let answer: any
      try {
        answer = await this.locks.rest.retrying(() => call, Math.max(this.leaseEnd, performance.now()))
      } catch (e) {
        if (e instanceof LockNotHeld && !this.closing && this.handedOver) {
          this.lose('a renewal found it no longer held (expired, force-released or replaced)', e)
        }
        throw e
      }
      this.leaseMs = Number(answer.lease_ms)
      this.leaseEnd = started + this.leaseMs
      this.guard()
    }
  }

  /** Renews now for `lease`, counted from now (the server replaces a lease, never adds to it); the
   * watchdog keeps that lease from then on. */
  async extend (lease: string | number): Promise<void> {
    const leaseMs = toMillis(lease, 'lease')
    await this.renew(leaseMs)
    this.request.leaseMs = leaseMs
  }

  /** @internal Before the grant is handed over (see the module's comment). */
  async arrive (): Promise<void> {
    if (this.watched && performance.now() >= this.grantedAt + this.renewIntervalMs()) {
      this.locks.logger.warn(`grant of ${this} arrived ${Math.round(performance.now() - this.grantedAt)} ms after it was made; renewing before handing it over`)
      try {
        await this.renew()
      } catch (e) {
        if (!(e instanceof LockError)) throw e
        if (e instanceof LockNotHeld || performance.now() >= this.leaseEnd) {
          if (!(e instanceof LockNotHeld)) await this.releaseQuietly()
          this.closing = true
          this.markReleased()
          throw new GrantExpired(`grant of [${this.keys.join(', ')}] for [${this.owner}] arrived after its lease could have ended and was not renewed in time: not acquired (${e.message})`, { cause: e })
        }
        this.locks.logger.warn(`renewal of late grant ${this} failed within its lease; the watchdog retries: ${e.message}`)
      }
    }
    this.handedOver = true
  }

  /** @internal Starts the watchdog, the lease guard and the loss watch. */
  start (): void {
    if (this.watched) {
      this.scheduleRenewal()
      this.guard()
    }
    if (this.session === undefined && !this.nested && this.locks.lossWatches > 0) {
      // The server's watch takes a lock's scopes and an election's observe; a semaphore's grant
      // has neither, and relies on its renewals.
      for (const g of this.grants) if (g.scope !== 'semaphore') void this.watchLoss(g)
    }
  }

  private scheduleRenewal (): void {
    if (!this.watching()) return
    this.renewTimer = setTimeout(() => { void this.renewRound() }, this.renewIntervalMs())
    this.renewTimer.unref()
  }

  private async renewRound (): Promise<void> {
    try {
      await this.renew()
    } catch (e) {
      if (!(e instanceof LockNotHeld) && this.watching()) {
        if (performance.now() >= this.leaseEnd) {
          this.lose(`renewals failed until its lease ran out (${(e as Error).message})`, e)
        } else {
          this.locks.logger.warn(`renewal of ${this} failed, retrying within its lease: ${(e as Error).message}`)
        }
      }
    }
    this.scheduleRenewal()
  }

  /** (Re)arms the timer that gives the lock up when its lease runs out on this client's clock with
   * no renewal in between. */
  private guard (): void {
    if (!this.watched || !this.watching()) return
    if (this.guardTimer !== undefined) clearTimeout(this.guardTimer)
    this.guardTimer = setTimeout(() => {
      if (this.watching() && this.leaseLeftMs() <= 0) this.lose('its lease ran out before a renewal succeeded')
      else this.guard()
    }, Math.max(0, this.leaseLeftMs()) + 1)
    this.guardTimer.unref()
  }

  /** How long one watch waits: a renewal interval, at least a second and at most a minute (well
   * within any `locks.wait.max`, which a longer lease's interval could pass). */
  private watchWaitMs (): number {
    return Math.min(60_000, Math.max(1000, Math.floor(this.renewIntervalMs())))
  }

  /** Watches grant `g` until the lock is let go or lost: one long poll after another. An answer
   * that its token ended is a loss, with the server's reason. A failed poll is retried after a
   * second (renewals still find a loss); a refused one (400) stops. With `onRevoke`, the first
   * poll also answers a request to yield: the callback is called once, the watch goes on. */
  private async watchLoss (g: Grant): Promise<void> {
    const release = await this.locks.lossSlots.take(this.watches.signal)
    if (release === undefined) return
    let notices = this.request.onRevoke !== undefined && g.scope !== 'election'
    try {
      while (this.watching()) {
        const waitMs = this.watchWaitMs()
        let answer: any
        try {
          answer = await this.locks.rest.retrying(deadline => ({
            method: 'GET',
            path: watchPath(g, millisLeft(deadline), notices),
            timeoutMs: millisLeft(deadline) + WAIT_MARGIN_MS
          }), performance.now() + waitMs, this.watches.signal)
        } catch (e) {
          if (!this.watching()) return
          if (e instanceof BadRequest) {
            this.locks.logger.warn(`watching ${this} refused, renewals alone will find a loss: ${e.message}`)
            return
          }
          this.locks.logger.info(`watch of ${this} failed, retrying: ${(e as Error).message}`)
          try { await sleep(1000, this.watches.signal) } catch { return }
          continue
        }
        if (answer.reason === 'revoke_requested') {
          notices = false
          this.revokeRequested(Number(answer.grace_ms ?? 0))
          continue
        }
        if (answer.changed === true && this.watching()) {
          const reason = answer.reason ?? `its term ended; leader now ${JSON.stringify(answer.leader ?? null)}`
          this.lose(`the server ended it (${reason})`)
        }
      }
    } finally {
      release()
    }
  }

  private revokeRequested (graceMs: number): void {
    this.revokeGraceMs = graceMs
    try {
      const result = this.request.onRevoke?.(this, graceMs)
      if (result instanceof Promise) result.catch((e: unknown) => this.locks.logger.warn(`onRevoke callback failed: ${String(e)}`))
    } catch (e) {
      this.locks.logger.warn(`onRevoke callback failed: ${String(e)}`)
    }
  }

  private stopWatching (): void {
    if (this.renewTimer !== undefined) clearTimeout(this.renewTimer)
    if (this.guardTimer !== undefined) clearTimeout(this.guardTimer)
    this.watches.abort()
  }

  // --- reading ---------------------------------------------------------------------------------

  /** Whether the server still has this grant (this owner, this token); false once released,
   * expired, force-released or lost. */
  async owned (): Promise<boolean> {
    for (const g of this.grants) {
      const state = await this.locks.stateOf(g.key, g.scope)
      const mine = g.scope === 'election'
        ? state.leader === this.owner && state.term === g.fencingToken
        : (state.holders ?? []).some((h: any) => h.owner === this.owner && h.fencing_token === g.fencingToken)
      if (!mine) return false
    }
    return true
  }

  /** Whether anyone holds any of its keys now (this grant or another). */
  async locked (): Promise<boolean> {
    for (const g of this.grants) {
      const state = await this.locks.stateOf(g.key, g.scope)
      if (g.scope === 'election' ? state.leader !== null : (state.holders ?? []).some((h: any) => h.intention !== true)) return true
    }
    return false
  }

  // --- fenced writes ---------------------------------------------------------------------------

  /** Writes `document` as `index/_doc/id` fenced by this lock's token (`version=<token>&
   * version_type=external_gte`): refused with `StaleToken` once a later holder wrote the document
   * with its larger token. Throws `LockLost` without writing when the lock is known lost.
   * `options.key` picks a multi-lock's token. Answers Elasticsearch's answer. */
  async index (index: string, id: string, document: object, options: IndexOptions & { key?: string } = {}): Promise<any> {
    const { key, ...rest } = options
    return await fencedIndex(this.locks.rest, index, id, document, this.fenceOf(key).token, rest)
  }

  // --- fenced changes (docs/API.md "Fenced changes") -------------------------------------------

  /** Changes `index/_doc/id` fenced by this lock's token: Elasticsearch applies the change only if
   * no later holder of the lock has changed the document, in the same operation, on its primary.
   * `change` is
   *
   * - a partial document (an object, merged as `_update`'s `doc` merges);
   * - an array of field operations (`ops.inc`, `ops.append`, `ops.set`, `ops.remove`): run in order
   *   on the document as its primary holds it, so a counter or a list needs no read;
   * - or a function of the document's source (null when missing or a tombstone), sync or async,
   *   answering the whole new document (null/undefined, or the source unchanged: nothing written):
   *   a fenced read first, then the result written with the same token (a read-modify-write).
   *
   * A missing document is created. Answers the document as it now stands, without its fence (null
   * for a tombstone). Throws `StaleToken` (with `fence` and `token`) when a later holder has changed
   * the document: nothing written; `LockLost` without sending anything when the lock is known
   * lost; `InvalidArgument` before sending for a change it cannot send; `IllegalArgument` for one
   * the document refuses (an `inc` of text). `options.key` picks a multi-lock's key. */
  async update<T extends object = Record<string, unknown>> (index: string, id: string,
    change: FencedChangeOf<T> | ModifyFn<T>, options: FencedOptions = {}): Promise<T | null> {
    const fence = this.fencedCheck(index, id, options)
    return await fenced.update<T>(this.locks.rest, index, id, fence, change, options.refresh, () => this.checkHeld())
  }

  /** The fenced read of `index/_doc/id`: raises the document's fence to this lock's token (from
   * then on an older holder's change is refused, and one that landed before is in what is read)
   * and answers its source without the fence, or null when missing or a tombstone (a missing
   * document becomes a tombstone). Throws as `update` does. */
  async read<T extends object = Record<string, unknown>> (index: string, id: string, options: { key?: string } = {}): Promise<T | null> {
    const fence = this.fencedCheck(index, id, options)
    return await fenced.fencedCall(this.locks.rest, index, id, fence, {}, undefined) as T | null
  }

  /** The fenced delete of `index/_doc/id`: it becomes a tombstone that keeps the fence, so an older
   * holder's later change is still refused (a plain delete's version is forgotten after
   * `index.gc_deletes`); a later change starts from an empty document. Throws as `update` does. */
  async delete (index: string, id: string, options: FencedOptions = {}): Promise<void> {
    const fence = this.fencedCheck(index, id, options)
    await fenced.fencedCall(this.locks.rest, index, id, fence, { delete: true }, options.refresh)
  }

  /** Many fenced changes in one `_bulk`, each fenced on its own by this lock's token: `changes`
   * are `{index, id, change}` with `change` a partial document, field operations or `ops.DELETE`
   * (no function: use `update` for a read-modify-write). Answers one `FencedResult` per change, in
   * order: `applied`, `stale` or `failed`, with the document as it now stands or the error; never
   * throws for an item. Throws `InvalidArgument` (nothing sent) for a change it cannot send,
   * `LockLost` as `update` does, and the error of the request as a whole. */
  async bulk (changes: readonly FencedChange[], options: FencedOptions = {}): Promise<FencedResult[]> {
    checkKnownOptions(options, ['key', 'refresh'], 'bulk')
    fenced.checkRefresh(options.refresh)
    const fence = this.fenceOf(options.key)
    return await fenced.bulk(this.locks.rest, changes, fence, options.refresh)
  }

  /** Throws the `LockLost` if this lock is known lost: nothing is sent under a lost lock. */
  private checkHeld (): void {
    if (this.lost) throw this.lostError
  }

  /** The key and token that fence a write or change: refused at once when the lock is known lost;
   * `key` names one of a multi-lock's keys (each has its own token). */
  private fenceOf (key: string | undefined): Fence {
    this.checkHeld()
    if (key === undefined && this.grants.length > 1) {
      throw new InvalidArgument(`[key] is required for a fenced write or change of a multi-lock: one of ${this.keys.join(', ')}`)
    }
    const grant = key === undefined ? this.grants[0] : this.grants.find(g => g.key === key)
    if (grant === undefined) throw new InvalidArgument(`[key] must be one of this lock's keys ${this.keys.join(', ')}, got [${key}]`)
    return { key: grant.key, token: grant.fencingToken }
  }

  private fencedCheck (index: string, id: string, options: FencedOptions): Fence {
    checkKnownOptions(options, ['key', 'refresh'], 'a fenced change')
    fenced.checkNames(index, id)
    fenced.checkRefresh(options.refresh)
    return this.fenceOf(options.key)
  }

  // --- downgrade -------------------------------------------------------------------------------

  /** Turns this exclusive lock (a `writeLock`) into a shared one (a read lock) without letting go
   * (`POST /_locks/{key}/_downgrade`, docs/API.md): the lock stays held throughout, so no waiting
   * writer gets in, while readers queued for the key (ahead of any waiting writer) are let in at
   * once; `fencingToken` and the lease stay the same, and the watchdog goes on renewing. A 503 is
   * retried within the lease. Throws `LockLost` when the lock is gone (found so now: it is lost),
   * `InvalidArgument` for a lock that is not exclusive, a multi-lock, a semaphore or a leadership,
   * or a nested handle (downgrade the outer one). */
  async downgrade (): Promise<void> {
    this.checkHeld()
    const g = this.grants[0] as Grant
    if (this.request.multi || (g.scope !== 'key' && g.scope !== 'tree')) {
      throw new InvalidArgument(`only a lock of one key is downgraded, not ${this}`)
    }
    if (g.mode !== 'exclusive') throw new InvalidArgument(`lock [${g.key}] is ${g.mode}: only an exclusive lock is downgraded`)
    if (this.nested) throw new InvalidArgument(`lock [${g.key}] is held by an outer handle of this owner: downgrade that one`)
    if (this.released) throw new LockNotHeld(`lock [${g.key}] was released: nothing to downgrade`)
    const call = { method: 'POST', path: pathOf(g.key, '/_downgrade', g.scope), body: { ...grantBody(this.owner, g, this.acquisition), mode: 'shared' } }
    let answer: any
    try {
      answer = await this.locks.rest.retrying(() => call, Math.max(this.leaseEnd, performance.now()))
    } catch (e) {
      if (e instanceof LockNotHeld) {
        this.lose('the downgrade found it no longer held (expired, force-released or replaced)', e)
        this.checkHeld()
      }
      throw e
    }
    this.grantList = [{ ...g, mode: answer.mode === 'exclusive' ? 'exclusive' : 'shared' }]
  }

  // --- release ---------------------------------------------------------------------------------

  /** Releases the lock; throws `LockLost` if it turned out lost (now or before). A nested handle
   * releases nothing (the outer one does). */
  async release (): Promise<void> {
    const error = await this.close()
    if (this.lost) throw this.lostError
    if (error !== undefined) throw error
  }

  /** `release()` for `await using`. */
  async [Symbol.asyncDispose] (): Promise<void> {
    await this.release()
  }

  /** @internal Releases, answering the error instead of throwing it. */
  async close (): Promise<unknown> {
    this.closing = true
    this.stopWatching()
    if (this.released) return undefined
    if (this.nested) {
      this.markReleased()
      return undefined
    }
    try {
      await this.releaseRequest()
    } catch (e) {
      if (e instanceof LockNotHeld) {
        this.lose('the release found it not held (expired, force-released or replaced)', e)
      } else {
        return e
      }
    }
    this.markReleased()
    return undefined
  }

  private async releaseQuietly (): Promise<void> {
    try {
      await this.releaseRequest()
    } catch (e) {
      this.locks.logger.info(`release of late grant ${this} failed (its lease ends it): ${(e as Error).message}`)
    }
  }

  private async releaseRequest (): Promise<void> {
    const budget = this.locks.retryForMs
    if (this.request.multi) {
      const locks = this.grants.map(g => ({ key: g.key, scope: g.scope, fencing_token: g.fencingToken }))
      const body = { owner: this.owner, locks, acquisition: this.acquisition }
      const answer = await this.locks.rest.simple('POST', '/_locks/_release', body, budget)
      const released = new Set((answer.released ?? []).map((r: any) => r.key))
      const gone = this.keys.filter(k => !released.has(k))
      if (gone.length > 0) throw new LockNotHeld(`the release found [${gone.join(', ')}] not held`)
    } else {
      const g = this.grants[0] as Grant
      await this.locks.rest.simple('POST', pathOf(g.key, '/_release', g.scope), grantBody(this.owner, g, this.acquisition), budget)
    }
  }

  /** @internal Released (by its release, or with its session): counted out of this client. */
  markReleased (): void {
    if (this.released) return
    this.released = true
    this.closing = true
    this.stopWatching()
    this.locks.holds.leave(this.owner, this.grants)
    this.locks.letGo(this)
    this.session?.handles.delete(this)
  }
}

/** A leadership (`locks.campaign(name)`): a held lock of scope `election`, the candidate its owner
 * and the term its fencing token; `resign()` ends it and elects the next candidate at once. */
export class Leadership extends HeldLock {
  /** The value published with the leadership. */
  readonly value: string | null

  /** @internal */
  constructor (locks: Locks, request: Request, answer: any, started: number) {
    super(locks, request, answer, started)
    this.value = answer.value ?? null
  }

  /** The election's name. */
  get name (): string {
    return this.key
  }

  /** The candidate that leads. */
  get candidate (): string {
    return this.owner
  }

  /** The leadership's term: larger than every earlier one of the election, a fencing token for the
   * leader's writes. */
  get term (): bigint {
    return this.fencingToken
  }

  /** Resigns (`release()`); throws `LockLost` if the leadership was lost. */
  async resign (): Promise<void> {
    await this.release()
  }
}

function grantsOf (request: Request, answer: any): Grant[] {
  if (request.targets[0]?.scope === 'election') {
    return [{ key: answer.name, mode: 'exclusive', scope: 'election', fencingToken: BigInt(answer.term) }]
  }
  const entries: any[] = request.multi ? answer.locks : [answer]
  return entries.map(e => ({ key: e.key, mode: e.mode, scope: e.scope, fencingToken: BigInt(e.fencing_token) }))
}

/** The body of a release or renew of one grant, naming it by token and acquisition (docs/API.md
 * "Acquisitions"): a semaphore's endpoints know their scope; an election's name the owner
 * `candidate` and the token `term`. */
export function grantBody (owner: string, g: Grant, acquisition: string | undefined): Record<string, unknown> {
  const named = acquisition === undefined ? {} : { acquisition }
  if (g.scope === 'election') return { candidate: owner, term: g.fencingToken, ...named }
  const body: Record<string, unknown> = { owner, fencing_token: g.fencingToken, ...named }
  if (g.scope !== 'semaphore') body.scope = g.scope
  return body
}

/** The long poll that answers when grant `g` ends: a lock's `_watch`, or for a leadership the
 * election's `_observe` of its term (which answers at once when the term is no longer current). */
export function watchPath (g: Grant, waitMs: number, revoke = false): string {
  if (g.scope === 'election') return pathOf(g.key, `/_observe?term=${g.fencingToken}&wait=${waitMs}ms`, 'election')
  return pathOf(g.key, `/_watch?token=${g.fencingToken}&wait=${waitMs}ms&scope=${g.scope}${revoke ? '&revoke=true' : ''}`)
}
