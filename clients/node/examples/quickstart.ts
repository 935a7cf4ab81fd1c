/** The README's first lock, run by test/readme.test.ts against the test node. */

import { Client } from '@elastic/elasticsearch'
import { Locks, LockWaitTimeout } from '@eslm/lock-manager'

/** Stands for the work a lock protects: it stops when `signal` aborts (the lock was lost). */
async function render (report: string, signal: AbortSignal): Promise<string> {
  signal.throwIfAborted()
  return `${report} rendered`
}

export async function quickstart (node: string): Promise<string[]> {
  const out: string[] = []
  const log = (...parts: unknown[]): void => { out.push(parts.map(String).join(' ')) }
  // README: quickstart
  const client = new Client({ node })  // yours: its auth, TLS and node pool carry every call
  const locks = new Locks(client)       // one per application; every acquire an owner of its own

  {
    await using held = await locks.lock('report-7', { lease: '10s' })  // waits until granted
    log('token', held.fencingToken)                                    // a bigint, larger each grant
    log('busy:', await locks.tryLock('report-7'))                      // one try: null
    try {
      await locks.lock('report-7', { timeout: '200ms' })               // a bounded wait
    } catch (e) {
      if (!(e instanceof LockWaitTimeout)) throw e
      log('timed out:', e.status, e.type)                              // 409 lock_wait_timeout_exception
    }
  }                                                                     // released here

  const done = await locks.withLock('report-7', async held => {
    return await render('report-7', held.signal)  // held.signal aborts if the lock is lost
  }, { lease: '10s' })
  log(done)
  await locks.close()  // releases whatever it still holds
  // README end
  await client.close()
  return out
}
