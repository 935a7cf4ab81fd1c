/**
 * Tests that change the whole node, run apart after the others (`npm test` runs this folder on its
 * own, one file at a time): a limit lowered for a moment, and a restore of the lock manager's
 * feature state from a snapshot, which drops every lock and puts the partition in recovery grace
 * (docs/OPERATIONS.md "Snapshots"), where acquires answer 503 `lock_partition_unavailable_exception`.
 * The node needs `path.repo` and a short `locks.recovery.grace` (tests/integration/
 * test_node_client.py starts it so).
 */

import { after, describe, test } from 'node:test'
import assert from 'node:assert/strict'

import { LimitExceeded, LockLost, PartitionUnavailable } from '../../src'
import { Fixture, abortedWithin, http, spy, unique, waitUntil } from '../helpers'

const fx = new Fixture()
after(async () => { await fx.closeAll() })

async function ok (method: string, path: string, body?: unknown): Promise<any> {
  const r = await http(method, path, body)
  assert.ok(r.status < 300, `${method} ${path}: ${r.status} ${JSON.stringify(r.body, (_k, v) => typeof v === 'bigint' ? String(v) : v)}`)
  return r.body
}

function millis (value: string): number {
  const m = /^(\d+)(ms|s|m)$/.exec(value)
  assert.ok(m !== null, `a duration: ${value}`)
  return Number(m[1]) * ({ ms: 1, s: 1000, m: 60_000 } as Record<string, number>)[m[2] as string]!
}

describe('the whole node', { timeout: 120_000 }, () => {
  test('a limit reached is LimitExceeded naming its setting', async () => {
    const locks = fx.newLocks()
    await ok('PUT', '/_cluster/settings', { persistent: { 'locks.limits.max_locks_per_owner': 1 } })
    try {
      await assert.rejects(locks.lockMany([unique(), unique()], { owner: unique('owner') }), (e: unknown) => {
        assert.ok(e instanceof LimitExceeded && e.status === 429, String(e))
        assert.equal(e.limit, 'locks.limits.max_locks_per_owner')
        return true
      })
    } finally {
      await ok('PUT', '/_cluster/settings', { persistent: { 'locks.limits.max_locks_per_owner': null } })
    }
  })

  test('in recovery grace a try-lock fails at once, an acquire retries the 503 with the same acquisition until its timeout, and one without a timeout is granted after the grace', async () => {
    const settings = await ok('GET', '/_nodes/settings?filter_path=nodes.*.settings.path.repo')
    const repo = (Object.values(settings.nodes ?? {})[0] as any)?.settings?.path?.repo
    assert.ok(repo !== undefined, 'the node needs path.repo (a snapshot repository folder) for this test')
    const diagnostics = await ok('GET', '/_locks/_node/diagnostics')
    const graceMs = millis(diagnostics.settings['locks.recovery.grace'])
    assert.ok(graceMs <= 60_000, `locks.recovery.grace ${graceMs} ms: this test waits it out, give the node a short one`)

    const retries: string[] = []
    const client = fx.client()
    const sent = spy(client)
    const locks = fx.newLocks({ logger: { info: m => retries.push(m) } }, client)
    const before = await locks.lock(unique(), { lease: '10s' })

    await ok('PUT', '/_snapshot/node-test-repo', { type: 'fs', settings: { location: `${Array.isArray(repo) ? repo[0] : repo}/node-test` } })
    const snapshot = unique('snapshot')
    await ok('PUT', `/_snapshot/node-test-repo/${snapshot}?wait_for_completion=true`,
      { indices: '-*', include_global_state: false, feature_states: ['lock_manager'] })
    const epoch = diagnostics.core.partitions[0].epoch
    await ok('POST', `/_snapshot/node-test-repo/${snapshot}/_restore?wait_for_completion=true`,
      { indices: '-*', include_global_state: false, feature_states: ['lock_manager'] })
    const graceFrom = performance.now()
    await waitUntil(async () => {
      const p = (await http('GET', '/_locks/_node/diagnostics')).body?.core?.partitions?.[0]
      return p !== undefined && p.epoch !== epoch && p.state === 'grace'
    }, 30_000, 'the partition reopened in recovery grace')

    // The lock held before the restore is gone: its loss watch says so.
    await abortedWithin(before.signal, 10_000)
    assert.ok(before.lostError instanceof LockLost)

    const key = unique()
    const t0 = performance.now()
    await assert.rejects(locks.tryLock(key), PartitionUnavailable)
    assert.ok(performance.now() - t0 < 1000, 'a try-lock has no budget to retry in')

    sent.length = 0
    retries.length = 0
    const t1 = performance.now()
    await assert.rejects(locks.lock(key, { timeout: '2s' }), (e: unknown) => {
      assert.ok(e instanceof PartitionUnavailable && e.status === 503, String(e))
      assert.match(e.reason, /recovery grace/)
      return true
    })
    const spent = performance.now() - t1
    assert.ok(spent >= 1000 && spent < 3500, `gave up after ${spent} ms of a 2 s budget`)
    const acquires = sent.filter(r => r.path.endsWith('/_acquire')).map(r => JSON.parse(r.body as string))
    assert.ok(acquires.length >= 2 && retries.some(m => m.includes('answered 503')), `retried: ${retries.join('; ')}`)
    assert.equal(new Set(acquires.map(b => b.acquisition)).size, 1, 'every retry names the same acquisition')
    assert.ok(acquires.every((b, i) => i === 0 || b.wait <= acquires[i - 1].wait), 'each retry waits only for what is left')

    assert.ok(performance.now() - graceFrom < graceMs - 1000, 'the grace still runs (the timings above ran late)')
    const held = await locks.lock(key) // until granted: the server queues it past the grace
    assert.ok(performance.now() - graceFrom >= graceMs - 3000, 'granted when the grace ended')
    assert.ok(held.fencingToken > before.fencingToken, 'a larger token than any before the restore')
    await held.release()
  })
})
