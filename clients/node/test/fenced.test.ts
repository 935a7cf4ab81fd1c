/** Fenced changes (docs/API.md "Fenced changes"): partial documents, field operations, reads,
 * deletes and bulk through the plugin's `fence` script, the two-holder interleaving that the plain
 * recipe loses an increment in, and the refusals made before anything is sent; then the downgrade
 * of a write lock to a read lock (`POST /_locks/{key}/_downgrade`). */

import { after, describe, test } from 'node:test'
import assert from 'node:assert/strict'

import {
  FencedResult, HeldLock, IllegalArgument, InvalidArgument, LockLost, StaleToken, ops
} from '../src'
import { Fixture, abortedWithin, forceRelease, http, queued, spy, state, unique, waitUntil } from './helpers'

const fx = new Fixture()
after(async () => { await fx.closeAll() })

const INDEX = 'node-test-fenced'

/** The document as Elasticsearch has it (a realtime GET), fence included; null when missing. */
async function stored (id: string): Promise<any> {
  const r = await http('GET', `/${INDEX}/_doc/${encodeURIComponent(id)}`)
  return r.status === 404 ? null : r.body._source
}

/** Waits until the server shows `key` free (a lease that runs out). */
async function free (key: string, withinMs: number): Promise<void> {
  await waitUntil(async () => ((await state(key)).holders ?? []).length === 0, withinMs, `${key} free on the server`)
}

describe('fenced changes', { timeout: 90_000 }, () => {
  test('a partial document, field operations, a read and a delete, each fenced by the lock\'s token and answered without the fence', async () => {
    const locks = fx.newLocks()
    const key = unique()
    const id = unique('doc')
    await using held = await locks.lock(key)
    assert.deepEqual(await held.read(INDEX, id), null, 'a missing document reads as none')
    assert.deepEqual(await held.update(INDEX, id, { status: 'packed', items: 2 }), { status: 'packed', items: 2 })
    const now = await held.update(INDEX, id, [ops.inc('items'), ops.inc('stats.weight', 2.5), ops.append('log', 'packed'),
      ops.set('owner.name', 'ann'), ops.remove('status')])
    assert.deepEqual(now, { items: 3, stats: { weight: 2.5 }, log: ['packed'], owner: { name: 'ann' } })
    const twice = await held.update<{ items: number, log: string[] }>(INDEX, id,
      doc => ({ ...(doc as { items: number, log: string[] }), items: (doc?.items ?? 0) * 2 }))
    assert.equal(twice?.items, 6)
    assert.deepEqual(await held.read(INDEX, id), { ...twice })
    const fence = (await stored(id)).eslm_fence
    assert.deepEqual([BigInt(fence.token), fence.key], [held.fencingToken, key], 'the fence is the lock\'s token and key')
    assert.deepEqual(await held.update(INDEX, id, () => null), twice, 'a function answering null writes nothing')
    await held.delete(INDEX, id)
    assert.equal(await held.read(INDEX, id), null, 'a tombstone reads as none')
    assert.equal((await stored(id)).eslm_fence.deleted, true, 'the tombstone keeps the fence')
    assert.deepEqual(await held.update(INDEX, id, [ops.inc('items')]), { items: 1 }, 'a change after the delete starts from nothing')
    await held.update(INDEX, id, { label: 'many' })
    await assert.rejects(held.update(INDEX, id, [ops.inc('items'), ops.inc('label')]), (e: unknown) => {
        assert.ok(e instanceof IllegalArgument, String(e))
      assert.match(e.message, /inc/, 'the plugin\'s reason is in the message')
      return true
    })
    assert.deepEqual(await held.read(INDEX, id), { items: 1, label: 'many' }, 'a refused change wrote nothing')
  })

  test('two holders interleaved: the first\'s lease runs out inside its read-modify-write, the second increments, and the first\'s write is refused as stale with the increment kept', async () => {
    // The first holder never learns it lost: no watchdog, no loss watch (a paused process).
    const first = await fx.newLocks({ lossWatches: 0 }).lock(unique(), { lease: '2s', watchdog: false })
    const key = first.key
    const id = unique('counter')
    await first.update(INDEX, id, [ops.inc('n', 10)])
    const second = fx.newLocks()
    let next: HeldLock | undefined
    const attempt = first.update<{ n: number, by?: string }>(INDEX, id, async doc => {
      // Between the first's fenced read and its write: its lease runs out, the second takes the
      // key and increments.
      assert.equal(doc?.n, 10)
      await free(key, 20_000)
      next = await second.lock(key)
      assert.deepEqual(await next.update(INDEX, id, [ops.inc('n')]), { n: 11 })
      return { n: (doc?.n ?? 0) + 1, by: 'first' }
    })
    await assert.rejects(attempt, (e: unknown) => {
      assert.ok(e instanceof StaleToken, String(e))
      assert.equal(e.type, 'stale_token')
      assert.equal(e.token, first.fencingToken)
      assert.equal(e.fence, next?.fencingToken)
      return true
    })
    const doc = await stored(id)
    assert.equal(doc.n, 11, 'the second holder\'s acknowledged increment is kept')
    assert.equal(doc.by, undefined, 'nothing of the stale holder\'s write landed')
    assert.equal(BigInt(doc.eslm_fence.token), next?.fencingToken)
    await assert.rejects(first.update(INDEX, id, { by: 'first' }), StaleToken)
    await assert.rejects(first.read(INDEX, id), StaleToken)
    await (next as HeldLock).release()
  })

  test('bulk: one _bulk, one result per item, applied, stale or failed, without throwing for an item', async () => {
    const old = await fx.newLocks({ lossWatches: 0 }).lock(unique(), { lease: '15s', watchdog: false })
    const [x, y, z, gone] = [unique('x'), unique('y'), unique('z'), unique('gone')]
    await old.update(INDEX, z, { label: 'text' })
    await old.update(INDEX, gone, { n: 1 })
    await forceRelease(old.key) // a pause past its lease, as far as the others can tell
    const next = await fx.newLocks().lock(old.key)
    await next.update(INDEX, x, [ops.inc('n')])
    const client = fx.client()
    const sent = spy(client)
    const probe = await fx.newLocks({}, client).lock(unique())
    assert.deepEqual(await probe.bulk([]), [])
    await probe.release()
    assert.equal(sent.filter(s => s.path.startsWith('/_bulk')).length, 0, 'an empty bulk sends nothing')
    const items = await old.bulk([
      { index: INDEX, id: x, change: [ops.inc('n')] },
      { index: INDEX, id: y, change: { status: 'new' } },
      { index: INDEX, id: z, change: [ops.inc('label')] },
      { index: INDEX, id: gone, change: ops.DELETE }
    ], { refresh: true })
    assert.deepEqual(items.map(r => r.outcome), ['stale', 'applied', 'failed', 'applied'])
    assert.ok(items.every(r => r instanceof FencedResult))
    const [stale, applied, failed, deleted] = items as [FencedResult, FencedResult, FencedResult, FencedResult]
    assert.ok(stale.stale && stale.error instanceof StaleToken && stale.fence === next.fencingToken)
    assert.ok(applied.applied && applied.fence === old.fencingToken)
    assert.deepEqual(applied.source, { status: 'new' })
    assert.ok(failed.failed && failed.error instanceof IllegalArgument, String(failed.error))
    assert.ok(deleted.applied && deleted.source === null)
    assert.equal((await stored(x)).n, 1, 'the stale item wrote nothing')
    assert.equal((await stored(z)).label, 'text', 'the failed item wrote nothing')
    await next.release()
  })

  test('a lock known lost sends nothing (LockLost), and bad changes are refused before anything is sent (InvalidArgument)', async () => {
    const client = fx.client()
    const sent = spy(client)
    const locks = fx.newLocks({}, client)
    const held = await locks.lock(unique(), { lease: '15s' })
    const bad: Array<[string, () => Promise<unknown>]> = [
      ['a document setting the fence', async () => await held.update(INDEX, 'd', { eslm_fence: { token: 1 } })],
      ['an inc of text', async () => await held.update(INDEX, 'd', [{ op: 'inc', field: 'n', value: 'x' }])],
      ['an unknown operation', async () => await held.update(INDEX, 'd', [{ op: 'mul', field: 'n', value: 2 } as any])],
      ['an operation on the fence', async () => await held.update(INDEX, 'd', [ops.set('eslm_fence.token', 1)])],
      ['an empty segment', async () => await held.update(INDEX, 'd', [{ op: 'set', field: 'a..b', value: 1 }])],
      ['a remove with a value', async () => await held.update(INDEX, 'd', [{ op: 'remove', field: 'a', value: 1 }])],
      ['a change that is no change', async () => await held.update(INDEX, 'd', 42 as any)],
      ['an empty index', async () => await held.update('', 'd', { a: 1 })],
      ['an unknown option', async () => await held.update(INDEX, 'd', { a: 1 }, { wait: true } as any)],
      ['a function in a bulk', async () => await held.bulk([{ index: INDEX, id: 'd', change: (() => ({})) as any }])],
      ['a bulk item without its id', async () => await held.bulk([{ index: INDEX, change: { a: 1 } } as any])],
      ['a function\'s result setting the fence', async () => await held.update(INDEX, unique('d'), () => ({ eslm_fence: 1 }))]
    ]
    for (const [what, call] of bad.slice(0, -1)) {
      await assert.rejects(call(), (e: unknown) => { assert.ok(e instanceof InvalidArgument, `${what}: ${String(e)}`); return true })
    }
    assert.equal(sent.filter(s => s.path.includes('_update') || s.path.startsWith('/_bulk')).length, 0, 'nothing sent for a bad change')
    const [what, call] = bad[bad.length - 1] as [string, () => Promise<unknown>]
    await assert.rejects(call(), (e: unknown) => { assert.ok(e instanceof InvalidArgument, `${what}: ${String(e)}`); return true })
    assert.equal(sent.filter(s => s.path.includes('_update')).length, 1, 'only the fenced read was sent')
    assert.throws(() => ops.inc('n', Infinity), InvalidArgument)
    await forceRelease(held.key)
    await abortedWithin(held.signal, 15_000)
    const before = sent.length
    for (const call of [() => held.update(INDEX, 'd', [ops.inc('n')]), () => held.read(INDEX, 'd'), () => held.delete(INDEX, 'd'),
      () => held.bulk([{ index: INDEX, id: 'd', change: { a: 1 } }]), () => held.update(INDEX, 'd', doc => doc)]) {
      await assert.rejects(call(), LockLost)
    }
    assert.equal(sent.length, before, 'nothing sent under a lock known lost')
    await assert.rejects(held.release(), LockLost)
  })
})

describe('downgrade', { timeout: 90_000 }, () => {
  test('a downgrade lets a queued reader in while a queued writer waits, with the same token', async () => {
    const locks = fx.newLocks()
    const key = unique()
    const writer = await locks.writeLock(key, { lease: '10s' })
    const reading = locks.readLock(key, { lease: '10s' })
    await queued(key)
    const writing = locks.writeLock(key, { lease: '10s' })
    await waitUntil(async () => ((await state(key)).waiters ?? []).length === 2, 20_000, 'the writer queued behind the reader')
    await writer.downgrade()
    assert.equal(writer.mode, 'shared')
    const reader = await reading
    const now = await state(key)
    assert.deepEqual(now.holders.map((h: any) => [h.owner, h.mode, h.fencing_token]).sort(),
      [[writer.owner, 'shared', writer.fencingToken], [reader.owner, 'shared', reader.fencingToken]].sort())
    assert.deepEqual(now.waiters.map((w: any) => w.mode), ['exclusive'], 'the writer still waits')
    await writer.renew() // the downgraded grant is renewed as before
    await writer.release()
    await reader.release()
    const next = await writing
    assert.ok(next.fencingToken > reader.fencingToken)
    await next.release()
  })

  test('only a held exclusive lock is downgraded: a read lock is refused before sending, a lost one is LockLost', async () => {
    const locks = fx.newLocks()
    const shared = await locks.readLock(unique())
    await assert.rejects(shared.downgrade(), InvalidArgument)
    await shared.release()
    const many = await locks.lockMany([unique(), unique()])
    await assert.rejects(many.downgrade(), InvalidArgument)
    await many.release()
    const gone = await fx.newLocks({ lossWatches: 0 }).lock(unique(), { watchdog: false })
    await forceRelease(gone.key)
    await assert.rejects(gone.downgrade(), LockLost)
    assert.equal(gone.lost, true, 'the downgrade that found it gone marked it lost')
    await assert.rejects(gone.downgrade(), LockLost)
    await assert.rejects(gone.release(), LockLost)
  })
})
