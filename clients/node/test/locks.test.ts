/** Taking locks: waiting by default, try-lock, timeouts, aborts, withLock and `await using`,
 * read/write pairs, multi-locks, nesting by owner, and options refused before anything is sent. */

import { after, describe, test } from 'node:test'
import assert from 'node:assert/strict'

import {
  AcquireAborted, ClientClosed, Deadlock, HeldLock, IllegalArgument, InvalidArgument, LockConflict,
  LockNotHeld, LockWaitTimeout, SessionNotFound
} from '../src'
import { Fixture, http, queued, spy, state, unique } from './helpers'

const fx = new Fixture()
after(async () => { await fx.closeAll() })

describe('lock', { timeout: 60_000 }, () => {
  test('waits until granted: a second acquire queues and gets the key, with a larger token, when the holder releases', async () => {
    const locks = fx.newLocks()
    const key = unique()
    const first = await locks.lock(key, { lease: '10s' })
    assert.equal(typeof first.fencingToken, 'bigint')
    let granted: HeldLock | undefined
    const waiting = locks.lock(key, { lease: '10s' }).then(h => { granted = h; return h })
    await queued(key)
    assert.equal(granted, undefined, 'still waiting while the key is held')
    await first.release()
    const second = await waiting
    assert.ok(second.fencingToken > first.fencingToken)
    assert.notEqual(second.owner, first.owner, 'every acquire has an owner of its own')
    assert.deepEqual((await state(key)).holders.map((h: any) => h.owner), [second.owner])
    await second.release()
    assert.deepEqual((await state(key)).holders, [])
  })

  test('tryLock answers null when the key is busy, the handle when it is free', async () => {
    const locks = fx.newLocks()
    const key = unique()
    const held = await locks.tryLock(key)
    assert.ok(held instanceof HeldLock)
    assert.equal(await locks.tryLock(key), null)
    await held.release()
    const again = await locks.tryLock(key)
    assert.ok(again !== null && again.fencingToken > held.fencingToken)
    await again.release()
  })

  test('a timeout bounds the wait (LockWaitTimeout); timeout 0 tries once (LockConflict naming the holder)', async () => {
    const locks = fx.newLocks()
    const key = unique()
    const held = await locks.lock(key)
    const t0 = performance.now()
    await assert.rejects(locks.lock(key, { timeout: '400ms' }), (e: unknown) => {
      assert.ok(e instanceof LockWaitTimeout, String(e))
      assert.equal(e.status, 409)
      return true
    })
    const waited = performance.now() - t0
    assert.ok(waited >= 350 && waited < 5000, `waited ${waited} ms`)
    await assert.rejects(locks.lock(key, { timeout: 0 }), (e: unknown) => {
      assert.ok(e instanceof LockConflict)
      assert.deepEqual(e.holders, [held.owner])
      return true
    })
    await held.release()
  })

  test('an AbortSignal stops a waiting acquire at once, and the server keeps no waiter and grants nothing', async () => {
    const locks = fx.newLocks()
    const key = unique()
    const held = await locks.lock(key)
    const controller = new AbortController()
    const waiting = locks.lock(key, { signal: controller.signal })
    await queued(key)
    const t0 = performance.now()
    controller.abort(new Error('enough'))
    await assert.rejects(waiting, (e: unknown) => {
      assert.ok(e instanceof AcquireAborted)
      assert.equal((e as Error).name, 'AbortError')
      assert.equal((e as Error & { cause: Error }).cause.message, 'enough')
      return true
    })
    assert.ok(performance.now() - t0 < 1000)
    await held.release()
    const after = await state(key)
    assert.deepEqual([after.holders, after.waiters], [[], []], 'the aborted waiter was dropped, not granted')
    const aborted = new AbortController()
    aborted.abort()
    await assert.rejects(locks.lock(key, { signal: aborted.signal }), AcquireAborted)
  })

  test('withLock runs the function holding the lock and releases it, also when the function throws', async () => {
    const locks = fx.newLocks()
    const key = unique()
    const seen = await locks.withLock(key, async held => {
      assert.deepEqual((await state(key)).holders.map((h: any) => h.fencing_token), [held.fencingToken])
      return held.fencingToken
    })
    assert.equal(typeof seen, 'bigint')
    assert.deepEqual((await state(key)).holders, [])
    await assert.rejects(locks.withLock(key, () => { throw new Error('work failed') }), /work failed/)
    assert.deepEqual((await state(key)).holders, [])
  })

  test('await using releases at the end of the block', async () => {
    const locks = fx.newLocks()
    const key = unique()
    let token: bigint
    {
      await using held = await locks.lock(key)
      token = held.fencingToken
      assert.equal((await state(key)).holders.length, 1)
    }
    assert.ok(token > 0n)
    assert.deepEqual((await state(key)).holders, [])
  })

  test('readLock is shared among readers; writeLock waits for them and excludes them', async () => {
    const locks = fx.newLocks()
    const key = unique()
    const r1 = await locks.readLock(key)
    const r2 = await locks.readLock(key, { timeout: 0 })
    assert.deepEqual([r1.mode, r2.mode], ['shared', 'shared'])
    const writing = locks.writeLock(key)
    await queued(key)
    await r1.release()
    assert.equal((await state(key)).waiters.length, 1, 'the writer waits for the last reader')
    await r2.release()
    const w = await writing
    assert.equal(w.mode, 'exclusive')
    assert.equal(await locks.tryLock(key, { mode: 'shared' }), null, 'no reader beside a writer')
    await w.release()
  })

  test('lockMany takes every key or none', async () => {
    const locks = fx.newLocks()
    const [a, b, c] = [unique(), unique(), unique()]
    const both = await locks.lockMany([a, { key: b, mode: 'shared' }])
    assert.deepEqual(both.keys.sort(), [a, b].sort())
    assert.equal(both.tokens.size, 2)
    await assert.rejects(locks.lockMany([c, a], { timeout: 0 }), LockConflict)
    assert.deepEqual((await state(c)).holders, [], 'none of a refused multi-lock is held')
    await both.release()
    assert.deepEqual([(await state(a)).holders, (await state(b)).holders], [[], []])
  })

  test('an acquire by an owner that holds the lock through this client gets the same grant (nested), whose release ends nothing', async () => {
    const locks = fx.newLocks()
    const key = unique()
    const outer = await locks.lock(key, { owner: 'node-test-owner' })
    const inner = await locks.lock(key, { owner: 'node-test-owner', timeout: 0 })
    assert.ok(inner.nested && !outer.nested)
    assert.equal(inner.fencingToken, outer.fencingToken)
    assert.equal(inner.acquisition, outer.acquisition)
    await inner.release()
    assert.equal(await outer.owned(), true)
    await outer.release()
    assert.equal(await outer.owned(), false)
  })

  test('bad options are refused with InvalidArgument naming them, before anything is sent', async () => {
    const client = fx.client()
    const sent = spy(client)
    const locks = fx.newLocks({}, client)
    const cases: Array<[() => Promise<unknown>, string]> = [
      [async () => await locks.lock('', {}), '[key]'],
      [async () => await locks.lock('k', { lease: '5 parsecs' }), '[lease]'],
      [async () => await locks.lock('k', { lease: -1 }), '[lease]'],
      [async () => await locks.lock('k', { timeout: Number.NaN }), '[timeout]'],
      [async () => await locks.lock('k', { mode: 'sharde' as any }), '[mode]'],
      [async () => await locks.lock('k', { scope: 'three' as any }), '[scope]'],
      [async () => await locks.lock('k', { priority: 10 }), '[priority]'],
      [async () => await locks.lock('k', { signal: 'stop' as any }), '[signal]'],
      [async () => await locks.lock('k', { leese: '1s' } as any), '[leese]'],
      [async () => await locks.lock('k'.repeat(513)), '[key]'],
      [async () => await locks.tryLock('k', { timeout: '1s' } as any), '[timeout]'],
      [async () => await locks.semaphore('s', { limit: 0 }), '[limit]'],
      [async () => await locks.semaphore('s', { limit: 2, permits: 3 }), '[permits]'],
      [async () => await locks.campaign('e', { value: 'x'.repeat(1025) }), '[value]'],
      [async () => await locks.watch('k', -1), '[token]'],
      [async () => await locks.lockMany([]), '[locks]']
    ]
    for (const [call, named] of cases) {
      await assert.rejects(call(), (e: unknown) => {
        assert.ok(e instanceof InvalidArgument, `${named}: ${String(e)}`)
        assert.ok((e as Error).message.includes(named), `${(e as Error).message} names ${named}`)
        return true
      })
    }
    assert.throws(() => fx.newLocks({ renewFraction: 1 }), /\[renewFraction\]/)
    assert.throws(() => fx.newLocks({ retryFor: 'soon' }), /\[retryFor\]/)
    assert.deepEqual(sent, [], 'nothing was sent')
  })

  test('server errors arrive as their classes: a lease over locks.lease.max, a deadlock, an unknown session, a release of nothing', async () => {
    const locks = fx.newLocks()
    const [a, b] = [unique(), unique()]
    await assert.rejects(locks.lock(a, { lease: '1h' }), (e: unknown) => {
      assert.ok(e instanceof IllegalArgument && e.status === 400 && e.message.includes('[lease]'), String(e))
      return true
    })
    const one = await locks.lock(a, { owner: 'node-test-d1' })
    const two = await locks.lock(b, { owner: 'node-test-d2' })
    const oneWaits = locks.lock(b, { owner: 'node-test-d1', timeout: '20s' })
    await queued(b, 'node-test-d1')
    const twoWaits = locks.lock(a, { owner: 'node-test-d2', timeout: '20s' })
    await assert.rejects(twoWaits, Deadlock, 'the youngest waiter closing the cycle is the victim')
    await two.release()
    const granted = await oneWaits
    assert.equal(granted.key, b)
    await granted.release()
    await one.release()

    const r = await http('POST', `/_locks/${a}/_acquire`, { owner: 'x', session: '0_00000000000000000000000000000000' })
    assert.equal(r.body.error.type, 'session_not_found_exception')
    const session = await locks.session({ ttl: '10s' })
    await session.end()
    await assert.rejects(locks.lock(a, { session }), SessionNotFound)
    const gone = await locks.lock(unique())
    await gone.release()
    assert.equal(await gone.owned(), false)
    const raw = await http('POST', `/_locks/${gone.key}/_release`, { owner: gone.owner, fencing_token: gone.fencingToken })
    assert.equal(raw.status, 404)
    assert.ok(new LockNotHeld('x') instanceof Error)
  })

  test('after close every acquire is refused with ClientClosed', async () => {
    const locks = fx.newLocks()
    await locks.close()
    await assert.rejects(locks.lock(unique()), ClientClosed)
    await assert.rejects(locks.tryLock(unique()), InvalidArgument)
  })
})
