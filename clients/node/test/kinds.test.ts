/** The other kinds of lock: semaphores, elections (campaign, observe, resign, leadership, the
 * leader loop), sessions and groups. */

import { after, describe, test } from 'node:test'
import assert from 'node:assert/strict'

import {
  GroupAlreadyExists, GroupNotEmpty, GroupNotFound, Leadership, LockConflict, LockLost, LockNotHeld,
  MemberAlreadyJoined, SemaphoreLimitMismatch, SessionLost
} from '../src'
import { Fixture, abortedWithin, forceRelease, http, queued, state, unique, waitUntil } from './helpers'

const fx = new Fixture()
after(async () => { await fx.closeAll() })

describe('semaphores', { timeout: 60_000 }, () => {
  test('up to limit permits at once; a waiter is granted when permits come back; another limit is refused', async () => {
    const locks = fx.newLocks()
    const name = unique('sem')
    const two = await locks.semaphore(name, { limit: 3, permits: 2 })
    assert.deepEqual([two.permits, two.remaining, two.scope], [2, 1, 'semaphore'])
    const one = await locks.trySemaphore(name, { limit: 3 })
    assert.ok(one !== null)
    assert.equal(await locks.trySemaphore(name, { limit: 3 }), null)
    await assert.rejects(locks.semaphore(name, { limit: 4, timeout: 0 }), (e: unknown) => e instanceof SemaphoreLimitMismatch && e.limit === 3)
    const waiting = locks.semaphore(name, { limit: 3, permits: 2 })
    await queued(name, undefined, 'semaphore')
    await two.release()
    const granted = await waiting
    assert.equal(granted.permits, 2)
    assert.equal((await locks.get(name, { scope: 'semaphore' })).holders.length, 2)
    const raised = await locks.setSemaphoreLimit(name, 5)
    assert.deepEqual([raised.limit, raised.previous], [5, 3])
    assert.equal(await locks.withSemaphore(name, h => h.permits, { limit: 5, permits: 2 }), 2)
    await one.release()
    await granted.release()
    assert.deepEqual((await state(name, 'semaphore')).holders, [])
  })

  test('a semaphore grant the server ends is lost at its next renewal (the server watches no semaphore)', async () => {
    const locks = fx.newLocks()
    const name = unique('sem')
    const held = await locks.semaphore(name, { limit: 2, lease: '3s' })
    await forceRelease(name, 'semaphore')
    await abortedWithin(held.signal, 3000)
    assert.ok(held.lostError?.cause instanceof LockNotHeld)
    await assert.rejects(held.release(), LockLost)
  })
})

describe('elections', { timeout: 60_000 }, () => {
  test('campaign waits until elected; observe sees the leader; resign elects the next candidate with a larger term', async () => {
    const locks = fx.newLocks()
    const name = unique('election')
    const first = await locks.observe(name, { wait: 0 })
    assert.deepEqual([first.leader, first.term, first.changed], [null, 0n, false])
    const lead = await locks.campaign(name, { value: '10.0.0.7:5432', lease: '10s' })
    assert.ok(lead instanceof Leadership && lead.term > 0n)
    const seen = await locks.observe(name, { term: 0, wait: '5s' })
    assert.deepEqual([seen.changed, seen.leader, seen.value, seen.term], [true, lead.candidate, '10.0.0.7:5432', lead.term])
    assert.equal(await locks.campaign(name, { timeout: 0 }).catch(e => e instanceof LockConflict), true)
    const next = locks.campaign(name, { candidate: 'node-test-next' })
    await waitUntil(async () => (await locks.election(name)).candidates.includes('node-test-next'), 20_000, 'the next candidate queued')
    const ended = locks.observe(name, { term: lead.term, wait: '20s' })
    await lead.resign()
    const then = await ended
    const second = await next
    assert.equal(then.changed, true)
    assert.ok(second.term > lead.term)
    assert.equal((await locks.election(name)).leader, 'node-test-next')
    await second.resign()
    assert.equal((await locks.election(name)).leader, null)
  })

  test('a leadership the server ends is lost: its signal aborts', async () => {
    const locks = fx.newLocks()
    const name = unique('election')
    const lead = await locks.campaign(name, { lease: '10s' })
    await forceRelease(name, 'election')
    await abortedWithin(lead.signal, 5000)
    await assert.rejects(lead.resign(), LockLost)
  })

  test('withLeadership leads for the function; runAsLeader leads round after round until stopped', async () => {
    const locks = fx.newLocks()
    const name = unique('election')
    const term = await locks.withLeadership(name, lead => lead.term)
    assert.ok(term > 0n)
    assert.equal((await locks.election(name)).leader, null)
    const stop = new AbortController()
    let rounds = 0
    const terms = await locks.runAsLeader(name, async (lead, signal) => {
      rounds++
      assert.equal((await locks.election(name)).term, lead.term)
      if (rounds === 2) {
        stop.abort()
        assert.equal(signal.aborted, true)
      }
    }, { signal: stop.signal, roundWait: '2s' })
    assert.equal(terms.length, 2)
    assert.ok((terms[1] as bigint) > (terms[0] as bigint) && (terms[0] as bigint) > term)
    assert.equal((await locks.election(name)).leader, null)
  })
})

describe('sessions', { timeout: 60_000 }, () => {
  test('locks under a session follow its keep-alive; ending it releases them all', async () => {
    const locks = fx.newLocks()
    const [a, b] = [unique(), unique()]
    const session = await locks.session({ ttl: '3s' })
    const one = await session.lock(a)
    const two = await session.readLock(b)
    assert.equal(one.owner, session.owner)
    await new Promise(resolve => setTimeout(resolve, 6500)) // two ttls and more: kept alive meanwhile
    assert.deepEqual((await state(a)).holders.map((h: any) => h.owner), [session.owner])
    await session.end()
    assert.deepEqual([(await state(a)).holders, (await state(b)).holders], [[], []])
    assert.equal(one.released && two.released, true)
  })

  test('a session ended behind its back is lost, and so is every lock under it', async () => {
    const locks = fx.newLocks()
    const lost: unknown[] = []
    const session = await locks.session({ ttl: '1500ms', onLost: s => lost.push(s) })
    const held = await session.lock(unique())
    const r = await http('DELETE', `/_locks/_session/${session.id}`, { owner: session.owner })
    assert.equal(r.status, 200)
    await abortedWithin(session.signal, 3000)
    assert.ok(session.signal.reason instanceof SessionLost)
    assert.equal(held.signal.aborted, true)
    assert.deepEqual(lost, [session])
    await assert.rejects(session.end(), SessionLost)
  })

  test('withSession ends the session after the function', async () => {
    const locks = fx.newLocks()
    const key = unique()
    const owner = await locks.withSession(async s => {
      await s.lock(key)
      return s.owner
    })
    assert.ok(owner.length > 0)
    assert.deepEqual((await state(key)).holders, [])
  })
})

describe('groups', { timeout: 60_000 }, () => {
  test('create, join, observe, update, heartbeat, leave, delete, with their errors', async () => {
    const locks = fx.newLocks()
    const name = unique('group')
    await locks.createGroup(name)
    await assert.rejects(locks.createGroup(name), GroupAlreadyExists)
    const joined = await locks.joinGroup(name, 'worker-1', { capabilities: { queues: ['eu'] }, lease: '10s' })
    assert.equal(typeof joined.fencing_token, 'bigint')
    await assert.rejects(locks.joinGroup(name, 'worker-1', { acquisition: 'another' }), MemberAlreadyJoined)
    const group = await locks.group(name)
    assert.deepEqual(group.members.map((m: any) => [m.member, m.capabilities]), [['worker-1', { queues: ['eu'] }]])
    const change = locks.observeGroup(name, { version: group.version, wait: '10s' })
    await locks.updateMember(name, 'worker-1', { queues: ['eu', 'us'] })
    const changed = await change
    assert.equal(changed.changed, true)
    assert.deepEqual(changed.members[0].capabilities, { queues: ['eu', 'us'] })
    await locks.heartbeatGroup(name, 'worker-1', { lease: '10s' })
    await assert.rejects(locks.deleteGroup(name), GroupNotEmpty)
    assert.ok((await locks.groups()).groups.includes(name))
    await locks.leaveGroup(name, 'worker-1')
    await assert.rejects(locks.leaveGroup(name, 'worker-1'), LockNotHeld)
    await locks.deleteGroup(name)
    await assert.rejects(locks.group(name), GroupNotFound)
  })
})
