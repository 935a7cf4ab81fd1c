/**
 * What the tests share. They run against real nodes only: `ESLM_URLS` (comma-separated node URLs)
 * must name them, and a test file fails at once when it is missing (tests/integration/
 * test_node_client.py starts a node and sets it). Requests the tests make themselves (an
 * administrator's force-release, reading a key's state) go through `fetch`, apart from the client
 * under test.
 */

import { randomBytes } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'

import { Client } from '@elastic/elasticsearch'

import { Locks, type LocksOptions, parseJson, stringifyJson } from '../src'

export function nodeUrls (): string[] {
  const urls = (process.env.ESLM_URLS ?? '').split(',').map(u => u.trim()).filter(u => u !== '')
  if (urls.length === 0) {
    throw new Error('ESLM_URLS is not set: these tests run against real nodes (comma-separated URLs, e.g. http://127.0.0.1:9200)')
  }
  return urls
}

export const URLS = nodeUrls()

export function unique (prefix = 'node-test'): string {
  return `${prefix}-${randomBytes(5).toString('hex')}`
}

/** A `Client` on every node, and the clients and `Locks` a test made, closed by `closeAll`. */
export class Fixture {
  readonly clients: Client[] = []
  readonly locks: Locks[] = []

  client (urls: string[] = URLS, options: Record<string, unknown> = {}): Client {
    const client = new Client({ nodes: urls, ...options })
    this.clients.push(client)
    return client
  }

  newLocks (options: LocksOptions = {}, client?: Client): Locks {
    const locks = new Locks(client ?? this.client(), options)
    this.locks.push(locks)
    return locks
  }

  async closeAll (): Promise<void> {
    for (const l of this.locks) await l.close()
    for (const c of this.clients) await c.close()
  }
}

/** A request to the first node through `fetch` (the test's own, not the client's). Answers
 * `{status, body}`, the body parsed with tokens as bigint. */
export async function http (method: string, path: string, body?: unknown): Promise<{ status: number, body: any }> {
  const response = await fetch(`${URLS[0]}${path}`, {
    method,
    headers: { 'content-type': 'application/json' },
    body: body === undefined ? undefined : stringifyJson(body)
  })
  const text = await response.text()
  return { status: response.status, body: text === '' ? null : parseJson(text) }
}

/** An administrator's force-release, through REST. */
export async function forceRelease (key: string, scope = 'key'): Promise<any> {
  const r = await http('POST', `/_locks/${encodeURIComponent(key)}/_force_release`, { scope, reason: 'a node test' })
  if (r.status !== 200) throw new Error(`force-release of ${key}: ${r.status} ${JSON.stringify(r.body, (_k, v) => typeof v === 'bigint' ? String(v) : v)}`)
  return r.body
}

/** The key's holders and waiters, as the server sees them. */
export async function state (key: string, scope = 'key'): Promise<any> {
  const path = scope === 'semaphore' ? `/_semaphores/${encodeURIComponent(key)}` : `/_locks/${encodeURIComponent(key)}?scope=${scope}`
  return (await http('GET', path)).body
}

/** Polls `probe` every 50 ms until it answers something truthy; fails after `withinMs`. For a
 * condition only the server can show (a waiter queued), which no event of the client announces. */
export async function waitUntil<T> (probe: () => Promise<T> | T, withinMs: number, what: string): Promise<T> {
  const deadline = performance.now() + withinMs
  for (;;) {
    const value = await probe()
    if (value) return value
    if (performance.now() > deadline) throw new Error(`not within ${withinMs} ms: ${what}`)
    await sleep(50)
  }
}

/** Resolves with the time it took (ms) once `signal` aborts; rejects after `withinMs`. */
export async function abortedWithin (signal: AbortSignal, withinMs: number): Promise<number> {
  const t0 = performance.now()
  if (signal.aborted) return 0
  return await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the signal did not abort within ${withinMs} ms`)), withinMs)
    signal.addEventListener('abort', () => { clearTimeout(timer); resolve(performance.now() - t0) }, { once: true })
  })
}

/** Waits until `owner` is queued on `key` (by the server's account). */
export async function queued (key: string, owner?: string, scope = 'key'): Promise<void> {
  await waitUntil(async () => {
    const waiters: any[] = (await state(key, scope)).waiters ?? []
    return owner === undefined ? waiters.length > 0 : waiters.some(w => w.owner === owner)
  }, 20_000, `a waiter${owner === undefined ? '' : ` ${owner}`} queued on ${key}`)
}

/** Counts the requests a client sends (a spy on the real transport, which still sends them). */
export function spy (client: Client): Array<{ method: string, path: string, body?: string }> {
  const sent: Array<{ method: string, path: string, body?: string }> = []
  const transport = client.transport as unknown as { request: (params: any, options: any) => Promise<unknown> }
  const request = transport.request.bind(transport)
  transport.request = async (params: any, options: any) => {
    sent.push({ method: params.method, path: params.path, body: params.body })
    return await request(params, options)
  }
  return sent
}
