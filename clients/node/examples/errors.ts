/** The README's errors example, run by test/readme.test.ts against the test node. */

import { Client } from '@elastic/elasticsearch'
import { LockConflict, LockError, Locks, PartitionUnavailable } from '@eslm/lock-manager'

export async function errors (node: string): Promise<string[]> {
  const out: string[] = []
  const log = (...parts: unknown[]): void => { out.push(parts.map(String).join(' ')) }
  const client = new Client({ node })
  const locks = new Locks(client, { retryFor: '10s' })
  const holder = await locks.lock('nightly-job')
  // README: errors
  try {
    await locks.lock('nightly-job', { timeout: 0 })
  } catch (e) {
    if (e instanceof LockConflict) log('held by', e.holders)          // the server's error.holders
    else if (e instanceof PartitionUnavailable) log('503 after retries:', e.reason)
    else if (e instanceof LockError) log(e.status, e.type, e.reason)  // any other error of the server
    else throw e
  }
  // README end
  await holder.release()
  await locks.close()
  await client.close()
  return out
}
