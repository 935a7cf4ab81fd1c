/**
 * Elasticsearch Lock Manager client for Node.js: cluster-wide locks with fencing tokens, a lease
 * watchdog and a lost-lock `AbortSignal`, over the official `@elastic/elasticsearch` client.
 *
 *     import { Client } from '@elastic/elasticsearch'
 *     import { Locks, ops } from '@eslm/lock-manager'
 *
 *     const locks = new Locks(new Client({ node: 'http://127.0.0.1:9200' }))
 *     await using held = await locks.lock('orders-42', { lease: '30s' })  // waits until granted
 *     await held.index('orders', '42', { status: 'shipped' })             // fenced by held.fencingToken
 *     await held.update('orders', '42', [ops.inc('items')])               // a fenced change
 *
 * See README.md.
 */

export { Locks, Slots, SERVER_WAIT_MAX_MS } from './locks'
export type {
  LocksOptions, AcquireOptions, LockOptions, ManyOptions, SemaphoreOptions, CampaignOptions,
  LeaderLoopOptions, WatchOptions
} from './locks'
export { HeldLock, Leadership, type Grant } from './held'
export { Session, type SessionOptions } from './session'
export type { JoinOptions } from './groups'
export type { IndexOptions, UpdateOptions } from './documents'
export { ops, FencedResult, FENCE_FIELD } from './fenced'
export type { FieldOp, Delete, FencedChange, FencedChangeOf, FencedOptions, ModifyFn, Outcome } from './fenced'
export type { Duration, Priority, Mode, Scope, GrantScope, TargetSpec } from './options'
export type { Logger, ClientLike } from './rest'
export { parse as parseJson, stringify as stringifyJson } from './json'
export * from './errors'
