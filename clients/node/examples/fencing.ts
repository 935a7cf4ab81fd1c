/** The README's fencing recipe, run by test/readme.test.ts against the test node. */

import { Client } from '@elastic/elasticsearch'
import { LockLost, Locks, StaleToken } from '@eslm/lock-manager'

export async function fencing (node: string): Promise<string[]> {
  const out: string[] = []
  const log = (...parts: unknown[]): void => { out.push(parts.map(String).join(' ')) }
  const client = new Client({ node })
  const locks = new Locks(client)
  // README: fencing
  const held = await locks.lock('orders-42')
  await held.index('orders', '42', { status: 'packed' })  // PUT orders/_doc/42?version=<token>&version_type=external_gte

  // The same write through the official client (Number() is exact while tokens stay below 2^53):
  await client.index({
    index: 'orders', id: '42', document: { status: 'shipped' },
    version: Number(held.fencingToken), version_type: 'external_gte'
  })

  // Say this holder stalls past its lease and the next one writes, with a larger token:
  await locks.forceRelease('orders-42')
  await locks.withLock('orders-42', next => next.index('orders', '42', { status: 'delivered' }))
  try {
    await held.index('orders', '42', { status: 'late' })
  } catch (e) {
    if (!(e instanceof StaleToken || e instanceof LockLost)) throw e
    log('refused:', e.name)  // StaleToken (409 from Elasticsearch), or LockLost once the client knows
  }

  // Without a lock: read, change, write back only if nobody wrote in between (else again).
  await locks.optimisticUpdate<{ n: number }>('counters', 'orders', doc => ({ n: (doc?.n ?? 0) + 1 }))
  // README end
  await locks.close().catch(() => {})
  await client.close()
  return out
}
