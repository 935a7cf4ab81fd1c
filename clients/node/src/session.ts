/**
 * Sessions (docs/API.md "Sessions"): many locks under one lease with one keep-alive. Created by
 * `locks.session()`, kept alive every `ttl × renewFraction` (an unref'd timer), ended by `end()`
 * (or `await using`), which releases its locks. A session found gone (a keep-alive answers 404, or
 * keep-alives fail for its whole ttl) is lost like a lock: `lost`, `signal` aborted, `onLost`
 * called, every lock under it lost too.
 */

import type { Locks, LockOptions, ManyOptions, SemaphoreOptions, CampaignOptions } from './locks'
import { type HeldLock, type Leadership, Losable } from './held'
import type { TargetSpec } from './options'
import { LockError, SessionLost, SessionNotFound } from './errors'

export interface SessionOptions {
  /** The session's lease (default: the server's `locks.lease.default`). */
  ttl?: string | number
  /** The session's partition: the hash tag of the keys it will lock (docs/API.md "Partitions and hash tags"). */
  routing?: string
  /** Called once if the session is lost. */
  onLost?: (session: Session) => unknown
}

export class Session extends Losable {
  /** The session's id (a secret of its owner: never logged by the server, never listed). */
  readonly id: string
  /** The owner of the session and of every lock under it. */
  readonly owner: string
  ttlMs: number
  ended = false
  /** @internal */
  readonly handles = new Set<HeldLock>()
  private expires: number
  private timer: NodeJS.Timeout | undefined
  private readonly onLost: ((s: Session) => unknown) | undefined

  /** @internal */
  constructor (locks: Locks, owner: string, answer: any, started: number, onLost?: (s: Session) => unknown) {
    super(locks)
    this.id = String(answer.session)
    this.owner = owner
    this.ttlMs = Number(answer.ttl_ms)
    this.expires = started + this.ttlMs
    this.onLost = onLost
  }

  override toString (): string {
    return `Session(${this.id} owner=${this.owner})`
  }

  protected letGo (): boolean {
    return this.ended
  }

  /** @internal A lock taken under this session: lost with it. */
  adopt (held: HeldLock): void {
    this.handles.add(held)
    if (this.lost) held.lose('its session was lost', this.lostError)
  }

  /** @internal */
  start (): void {
    if (!this.watching()) return
    this.timer = setTimeout(() => { void this.keepAliveRound() }, this.ttlMs * this.locks.renewFraction)
    this.timer.unref()
  }

  private async keepAliveRound (): Promise<void> {
    const started = performance.now()
    const call = { method: 'POST', path: `/_locks/_session/${encodeURIComponent(this.id)}/_keepalive`, body: { owner: this.owner } }
    try {
      const answer = await this.locks.rest.retrying(() => call, Math.max(this.expires, performance.now()))
      this.expires = started + Number(answer.ttl_ms)
    } catch (e) {
      if (this.watching()) {
        if (e instanceof SessionNotFound) this.lose('a keep-alive found it gone (expired or ended)', e)
        else if (performance.now() >= this.expires) this.lose(`keep-alives failed until its ttl ran out (${(e as Error).message})`, e)
        else this.locks.logger.warn(`keep-alive of ${this} failed, retrying within its ttl: ${(e as Error).message}`)
      }
    }
    this.start()
  }

  /** Marks the session lost (once), aborts its signal, calls `onLost`, and loses its locks. */
  lose (reason: string, cause?: unknown): void {
    const error = new SessionLost(`session ${this.id} of [${this.owner}] was lost: ${reason}`, this, cause)
    if (this.markLost(error)) {
      if (this.timer !== undefined) clearTimeout(this.timer)
      this.callBack(this.onLost, this)
      for (const held of [...this.handles]) held.lose('its session was lost', error)
    }
  }

  // --- locks under the session: the `Locks` calls with `session: this` -----------------------------

  /** `locks.lock(key, {...options, session})`: held under the session's lease. */
  async lock (key: string, options: Omit<LockOptions, 'session' | 'owner'> = {}): Promise<HeldLock> {
    return await this.locks.lock(key, { ...options, session: this })
  }

  async tryLock (key: string, options: Omit<LockOptions, 'session' | 'owner' | 'timeout'> = {}): Promise<HeldLock | null> {
    return await this.locks.tryLock(key, { ...options, session: this })
  }

  async readLock (key: string, options: Omit<LockOptions, 'session' | 'owner' | 'mode'> = {}): Promise<HeldLock> {
    return await this.locks.readLock(key, { ...options, session: this })
  }

  async writeLock (key: string, options: Omit<LockOptions, 'session' | 'owner' | 'mode'> = {}): Promise<HeldLock> {
    return await this.locks.writeLock(key, { ...options, session: this })
  }

  async withLock<T> (key: string, fn: (held: HeldLock) => Promise<T> | T, options: Omit<LockOptions, 'session' | 'owner'> = {}): Promise<T> {
    return await this.locks.withLock(key, fn, { ...options, session: this })
  }

  async lockMany (locks: readonly TargetSpec[], options: Omit<ManyOptions, 'session' | 'owner'> = {}): Promise<HeldLock> {
    return await this.locks.lockMany(locks, { ...options, session: this })
  }

  async semaphore (name: string, options: Omit<SemaphoreOptions, 'session' | 'owner'>): Promise<HeldLock> {
    return await this.locks.semaphore(name, { ...options, session: this })
  }

  async campaign (name: string, options: Omit<CampaignOptions, 'session' | 'candidate'> = {}): Promise<Leadership> {
    return await this.locks.campaign(name, { ...options, session: this })
  }

  /** Ends the session (its locks are released); throws `SessionLost` if it was lost. */
  async end (): Promise<void> {
    const error = await this.close()
    if (this.lost) throw this.lostError
    if (error !== undefined) throw error
  }

  /** `end()` for `await using`. */
  async [Symbol.asyncDispose] (): Promise<void> {
    await this.end()
  }

  /** @internal Ends the session, answering the error instead of throwing it. */
  async close (): Promise<unknown> {
    this.closing = true
    if (this.timer !== undefined) clearTimeout(this.timer)
    if (this.ended) return undefined
    try {
      await this.locks.rest.simple('DELETE', `/_locks/_session/${encodeURIComponent(this.id)}`, { owner: this.owner }, this.locks.retryForMs)
    } catch (e) {
      if (e instanceof SessionNotFound) this.lose('ending it found it gone (expired)', e)
      else if (e instanceof LockError || e instanceof Error) return e
    }
    this.ended = true
    this.locks.letGo(this)
    for (const held of [...this.handles]) held.markReleased()
    return undefined
  }
}
