/** The README's sessions, semaphores, elections and signals example, run by test/readme.test.ts. */

import { Client } from '@elastic/elasticsearch'
import { Locks } from '@eslm/lock-manager'

export async function more (node: string): Promise<string[]> {
  const out: string[] = []
  const log = (...parts: unknown[]): void => { out.push(parts.map(String).join(' ')) }
  const client = new Client({ node })
  const locks = new Locks(client)
  // README: more
  const session = await locks.session({ ttl: '10s' })          // kept alive in the background
  await session.lockMany(['{order-7}items', '{order-7}payment'])
  await session.end()                                           // releases its locks

  await using permit = await locks.semaphore('api-quota', { limit: 4, permits: 1 })
  log('permits left:', permit.remaining)

  await using lead = await locks.campaign('scheduler', { value: '10.0.0.7:8080' })  // waits until elected
  log('leading with term', lead.term, (await locks.election('scheduler')).leader === lead.candidate)

  const stop = new AbortController()
  const waiting = locks.readLock('catalog', { signal: stop.signal })  // shared; writeLock: exclusive
  stop.abort()                                                        // AcquireAborted (an AbortError)
  await waiting.catch(e => log(e.name))
  // README end
  await locks.close()
  await client.close()
  return out
}
