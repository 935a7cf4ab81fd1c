/** Fenced writes and optimistic updates (docs/API.md "Fenced writes and optimistic updates"), and
 * close() letting go of everything. */

import { after, describe, test } from 'node:test'
import assert from 'node:assert/strict'

import { ClientClosed, StaleToken, UpdateConflict, parseJson } from '../src'
import { Fixture, forceRelease, http, queued, state, unique } from './helpers'

const fx = new Fixture()
after(async () => { await fx.closeAll() })

const INDEX = 'node-test-orders'

describe('fencing', { timeout: 60_000 }, () => {
  test('a fenced write carries the token as the external version; a stale holder\'s write is refused with StaleToken', async () => {
    const locks = fx.newLocks({ lossWatches: 0 }) // the stale holder must not know yet that it lost:
    const key = unique() // no loss watch, and no watchdog whose renewal would find it gone
    const id = unique('doc')
    const stale = await locks.lock(key, { lease: '15s', watchdog: false }) // locks.lease.max of the test node
    const first = await stale.index(INDEX, id, { status: 'packed' })
    assert.equal(BigInt(first._version), stale.fencingToken)
    await forceRelease(key) // a pause past its lease, as far as the others can tell
    const next = await locks.lock(key)
    await next.index(INDEX, id, { status: 'shipped' }, { refresh: true })
    await next.index(INDEX, id, { status: 'delivered' }) // the same holder writes again
    await assert.rejects(stale.index(INDEX, id, { status: 'lost' }), (e: unknown) => {
      assert.ok(e instanceof StaleToken && e.status === 409, String(e))
      assert.deepEqual([e.token, e.fence], [stale.fencingToken, next.fencingToken], 'this lock\'s token, the document\'s version')
      return true
    })
    const doc = await http('GET', `/${INDEX}/_doc/${id}`)
    assert.deepEqual([doc.body._source.status, doc.body._version], ['delivered', Number(next.fencingToken)])
    await next.release()
  })

  test('optimisticUpdate applies a change without a lock, again after each lost race, and writes nothing for no change', async () => {
    const locks = fx.newLocks()
    const id = unique('counter')
    const increments = 8
    await Promise.all(Array.from({ length: increments }, async () =>
      await locks.optimisticUpdate<{ n: number }>(INDEX, id, doc => ({ n: (doc?.n ?? 0) + 1 }), { retries: 50 })))
    const now = await http('GET', `/${INDEX}/_doc/${id}`)
    assert.equal(now.body._source.n, increments)
    const same = await locks.optimisticUpdate<{ n: number }>(INDEX, id, doc => doc)
    assert.equal(same?.n, increments)
    assert.equal((await http('GET', `/${INDEX}/_doc/${id}`)).body._version, now.body._version, 'nothing written')
    let calls = 0
    await assert.rejects(locks.optimisticUpdate<{ n: number }>(INDEX, id, async doc => {
      calls++
      await http('PUT', `/${INDEX}/_doc/${id}`, { n: -calls }) // another writer gets in every time
      return { n: (doc?.n ?? 0) + 100 }
    }, { retries: 2 }), UpdateConflict)
    assert.equal(calls, 3)
  })

  test('tokens are read as bigint, also beyond 2^53', () => {
    const answer = parseJson('{"fencing_token":9223372036854775807,"lease_ms":5,"big":9007199254740993,"f":1.5,"s":"\\u00e9"}') as any
    assert.deepEqual(answer, { fencing_token: 9223372036854775807n, lease_ms: 5, big: 9007199254740993n, f: 1.5, s: 'é' })
  })
})

describe('close', { timeout: 60_000 }, () => {
  test('close releases every lock it holds, ends its sessions, and ends the acquires still waiting with ClientClosed', async () => {
    const locks = fx.newLocks()
    const other = fx.newLocks()
    const [a, b, c, busy] = [unique(), unique(), unique(), unique()]
    const one = await locks.lock(a, { lease: '10s' })
    await locks.readLock(b)
    const session = await locks.session({ ttl: '10s' })
    await session.lock(c)
    const blocker = await other.lock(busy)
    const waiting = locks.lock(busy).then(() => 'granted', (e: unknown) => e)
    await queued(busy)
    await locks.close()
    assert.ok(await waiting instanceof ClientClosed)
    for (const key of [a, b, c]) assert.deepEqual((await state(key)).holders, [], `${key} released by close`)
    assert.equal(one.released && session.ended, true)
    assert.deepEqual((await state(busy)).waiters, [], 'the waiter is gone')
    const r = await http('POST', `/_locks/_session/${session.id}/_keepalive`, { owner: session.owner })
    assert.equal(r.body.error.type, 'session_not_found_exception')
    await blocker.release()
    assert.deepEqual((await state(busy)).holders, [], 'nothing was granted to the closed client')
  })
})
