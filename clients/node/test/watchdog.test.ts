/** The lease watchdog and the lost-lock signal: renewals keep a lock past its lease; a lock the
 * server ends (force-release, expiry, a newer acquisition of its owner) is lost within its lease,
 * `held.signal` aborting with the `LockLost`; a late release never ends a newer grant. */

import { after, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { setTimeout as sleep } from 'node:timers/promises'

import { LockLost, LockNotHeld } from '../src'
import { Fixture, abortedWithin, forceRelease, http, state, unique } from './helpers'

const fx = new Fixture()
after(async () => { await fx.closeAll() })

describe('watchdog and loss', { timeout: 60_000 }, () => {
  test('the watchdog renews the lease: a lock outlives its lease several times over with the same token', async () => {
    const locks = fx.newLocks()
    const key = unique()
    const held = await locks.lock(key, { lease: '2s' })
    await sleep(5000) // two and a half leases: without renewals the server would have ended it
    const holders = (await state(key)).holders
    assert.deepEqual(holders.map((h: any) => [h.owner, h.fencing_token]), [[held.owner, held.fencingToken]])
    assert.ok(holders[0].held_ms >= 4500 && holders[0].lease_ms > 0, JSON.stringify(holders[0].lease_ms))
    assert.equal(held.lost, false)
    await held.release()
  })

  test('a force-release through REST aborts held.signal within the lease (the loss watch), calls onLost, and release throws LockLost', async () => {
    const locks = fx.newLocks()
    const key = unique()
    const calls: unknown[] = []
    const held = await locks.lock(key, { lease: '10s', onLost: h => calls.push(h) })
    await forceRelease(key)
    const after = await abortedWithin(held.signal, 10_000)
    assert.ok(after < 3000, `lost ${after} ms after the force-release: the watch, not the next renewal`)
    assert.ok(held.signal.reason instanceof LockLost)
    // force_released, or not_held when the force-release came before the watch reached the node
    assert.match(held.signal.reason.message, /force_released|not_held/)
    assert.equal(held.lost, true)
    assert.deepEqual(calls, [held])
    await assert.rejects(held.index('node-test-docs', unique(), { a: 1 }), LockLost, 'a fenced write of a lost lock is refused before it is sent')
    await assert.rejects(held.release(), LockLost)
  })

  test('without loss watches, the next renewal finds the loss, still within the lease', async () => {
    const locks = fx.newLocks({ lossWatches: 0 })
    const key = unique()
    const held = await locks.lock(key, { lease: '3s' })
    await forceRelease(key)
    const after = await abortedWithin(held.signal, 3000)
    assert.ok(held.signal.reason instanceof LockLost && held.signal.reason.cause instanceof LockNotHeld, String(held.signal.reason))
    assert.ok(after <= 3000)
  })

  test('with the watchdog off the lease runs out, and the loss watch says it expired', async () => {
    const locks = fx.newLocks()
    const key = unique()
    const held = await locks.lock(key, { lease: '1s', watchdog: false })
    await abortedWithin(held.signal, 5000)
    assert.match(String(held.lostError?.message), /expired/)
    assert.deepEqual((await state(key)).holders, [])
  })

  test('withLock rejects with LockLost when the lock was lost while the function ran, and says what the function threw', async () => {
    const locks = fx.newLocks()
    const key = unique()
    const failure = new Error('stopped by the signal')
    await assert.rejects(locks.withLock(key, async held => {
      await forceRelease(key)
      await abortedWithin(held.signal, 10_000)
      throw failure
    }), (e: unknown) => {
      assert.ok(e instanceof LockLost)
      assert.equal(e.blockError, failure)
      return true
    })
  })

  test('a late release never ends a newer grant: the same owner acquired again elsewhere, the old handle is lost and its release ends nothing', async () => {
    const mine = fx.newLocks()
    const elsewhere = fx.newLocks() // another process under the same owner name
    const key = unique()
    const old = await mine.lock(key, { owner: 'node-test-shared-owner', lease: '10s' })
    const newer = await elsewhere.lock(key, { owner: 'node-test-shared-owner', lease: '10s' })
    assert.ok(newer.fencingToken > old.fencingToken, 'a new acquisition of a held lock: a newer token')
    assert.notEqual(newer.acquisition, old.acquisition)
    await abortedWithin(old.signal, 10_000)
    assert.match(String(old.lostError?.message), /upgraded|not_held/)
    // The old grant's release, as a slow proxy would deliver it late, through REST and the client:
    const late = await http('POST', `/_locks/${key}/_release`, { owner: old.owner, fencing_token: old.fencingToken, acquisition: old.acquisition })
    assert.equal(late.status, 404)
    await assert.rejects(old.release(), LockLost)
    assert.deepEqual((await state(key)).holders.map((h: any) => h.fencing_token), [newer.fencingToken])
    assert.equal(await newer.owned(), true)
    await newer.release()
  })

  test('a holder asked to yield by a preempting waiter hears it through onRevoke, and its release grants the waiter', async () => {
    const locks = fx.newLocks()
    const key = unique()
    let asked: number | undefined
    const released: Array<Promise<void>> = []
    const job = await locks.lock(key, {
      priority: 'background',
      lease: '10s',
      onRevoke: (held, graceMs) => { asked = graceMs; released.push(held.release()) }
    })
    const t0 = performance.now()
    const urgent = await locks.lock(key, { priority: 'foreground', timeout: '10s', preempt: '5s' })
    assert.ok(asked !== undefined && asked > 0 && asked <= 5000, `onRevoke's grace: ${asked}`)
    assert.ok(performance.now() - t0 < 4000, 'granted on the release, not when the grace ended')
    await Promise.all(released)
    assert.equal(job.released && !job.lost, true)
    assert.ok(urgent.fencingToken > job.fencingToken)
    await urgent.release()
  })

  test('a renewal names the grant: renew() after a force-release answers LockNotHeld and loses the lock', async () => {
    const locks = fx.newLocks({ lossWatches: 0 })
    const key = unique()
    const held = await locks.lock(key, { lease: '10s' })
    await held.renew('8s')
    assert.ok(held.leaseMs <= 8000 && held.leaseMs > 0)
    await forceRelease(key)
    await assert.rejects(held.renew(), LockNotHeld)
    assert.equal(held.lost, true)
    assert.equal(held.signal.aborted, true)
  })
})
