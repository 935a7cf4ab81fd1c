/** The README's fenced changes and downgrade, run by test/readme.test.ts against the test node. */

import { Client } from '@elastic/elasticsearch'
import { LockLost, Locks, StaleToken, ops } from '@eslm/lock-manager'

interface Order { status?: string, items?: number, total?: number, log?: string[] }

/** Stands for work a write lock protects, then work a read lock is enough for. */
async function rebuild (what: string, signal: AbortSignal): Promise<void> {
  signal.throwIfAborted()
  void what
}

export async function fencedChanges (node: string): Promise<string[]> {
  const out: string[] = []
  const log = (...parts: unknown[]): void => { out.push(parts.map(String).join(' ')) }
  const client = new Client({ node })
  const locks = new Locks(client)
  // README: fenced
  const held = await locks.lock('carts-7')
  await held.update('carts', '7', { status: 'open', items: 0 })                     // a partial document, merged
  await held.update('carts', '7', [ops.inc('items'), ops.append('log', 'added')])   // field operations: no read
  const cart = await held.update<Order>('carts', '7', doc => ({ ...doc, total: (doc?.items ?? 0) * 5 }))  // read-modify-write
  log('total', cart?.total, 'read back:', (await held.read<Order>('carts', '7'))?.total)
  await held.delete('carts', '8')                                                   // a tombstone that keeps the fence
  const results = await held.bulk([
    { index: 'carts', id: '9', change: { status: 'open' } },
    { index: 'carts', id: '10', change: [ops.inc('items')] },
    { index: 'carts', id: '11', change: ops.DELETE }
  ])
  log(results.map(r => r.outcome).join(' '))  // applied, stale or failed per item: never thrown

  // Say this holder stalls past its lease and the next one changes the cart:
  await locks.forceRelease('carts-7')
  await locks.withLock('carts-7', next => next.update('carts', '7', [ops.inc('items')]))
  try {
    await held.update<Order>('carts', '7', doc => ({ ...doc, items: 0 }))
  } catch (e) {
    if (!(e instanceof StaleToken || e instanceof LockLost)) throw e
    log('refused:', e.name)  // StaleToken (e.fence > e.token: nothing written), or LockLost once the client knows
  }
  // README end
  // README: downgrade
  const writer = await locks.writeLock('catalog')
  const token = writer.fencingToken
  await rebuild('catalog', writer.signal)  // exclusive: readers and writers wait
  await writer.downgrade()                 // now shared: queued readers get in, writers still wait
  log(writer.mode, 'token kept:', writer.fencingToken === token)  // shared token kept: true
  await writer.release()
  // README end
  await locks.close().catch(() => {})
  await client.close()
  return out
}
