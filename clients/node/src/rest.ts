/**
 * Requests through the user's own `@elastic/elasticsearch` client: every call is
 * `client.transport.request(...)`, so its authentication, TLS, node pool, product check and
 * connection-failure retries are the ones used. Answers are read as text and parsed with
 * json.ts (tokens as bigint). Error answers become the errors of errors.ts; a 503 is retried
 * here, within the caller's budget (`retrying`), never by the transport itself, which would send
 * a queued acquire again with its whole wait.
 */

import { createGunzip, createInflate } from 'node:zlib'
import { Readable } from 'node:stream'
import { setTimeout as sleepFor } from 'node:timers/promises'
import { debuglog } from 'node:util'

import { AcquireAborted, LockConnectionError, LockError, Unavailable, fromResponse } from './errors'
import { parse, stringify } from './json'

/** What this client needs of an `@elastic/elasticsearch` `Client`: its transport. */
export interface ClientLike {
  transport: {
    request: (params: { method: string, path: string, body?: string, bulkBody?: string }, options: Record<string, unknown>) => Promise<unknown>
  }
  /** The client's node pool: a node that says it is shutting down is marked dead in it. */
  connectionPool?: { markDead: (connection: any) => unknown }
}

/** Where the client writes what it does: `debug`/`info` default to `NODE_DEBUG=eslm`, `warn` to
 * `console.warn`. */
export interface Logger {
  debug: (message: string) => void
  info: (message: string) => void
  warn: (message: string) => void
}

const debug = debuglog('eslm')

export const DEFAULT_LOGGER: Logger = {
  debug: (m) => debug(m),
  info: (m) => debug(m),
  warn: (m) => console.warn(`eslm: ${m}`)
}

/** A request that queues on the server (a wait) may last that long: its request timeout is the
 * wait plus this margin, whatever the client's default is. */
export const WAIT_MARGIN_MS = 30_000

/** 503 backoff: 50 ms doubling to 1 s, each delay drawn from its upper half (jitter). */
export const BACKOFF_FIRST_MS = 50
export const BACKOFF_MAX_MS = 1000

const HEADERS = { 'content-type': 'application/json', accept: 'application/json' }
const NDJSON_HEADERS = { 'content-type': 'application/x-ndjson', accept: 'application/json' }

export interface Call {
  method: string
  /** The path and its query string, already encoded. */
  path: string
  body?: unknown
  /** Instead of `body`: lines of newline-delimited JSON (`_bulk`), each written as `body` is. */
  ndjson?: unknown[]
  /** The request timeout (ms); undefined: the client's own. */
  timeoutMs?: number
}

export function backoff (attempt: number): number {
  const cap = Math.min(BACKOFF_MAX_MS, BACKOFF_FIRST_MS * 2 ** attempt)
  return cap / 2 + Math.random() * cap / 2
}

/** Sleeps `ms`, unless `signal` aborts first (then rejects with `AcquireAborted`). */
export async function sleep (ms: number, signal?: AbortSignal): Promise<void> {
  try {
    await sleepFor(ms, undefined, signal === undefined ? undefined : { signal })
  } catch (e) {
    if (isAborted(signal)) throw aborted(signal as AbortSignal)
    throw e
  }
}

/** Whether `signal` is given and aborted (a function: TypeScript would narrow a property read). */
export function isAborted (signal: AbortSignal | undefined): boolean {
  return signal?.aborted === true
}

/** A signal that aborts when any of `signals` does (with its reason), and `dispose` to stop
 * following them. Not `AbortSignal.any`: on Node 20 its signal reached undici late. */
export function anySignal (signals: AbortSignal[]): { signal: AbortSignal, dispose: () => void } {
  const controller = new AbortController()
  const follow: Array<[AbortSignal, () => void]> = []
  const dispose = (): void => { for (const [s, f] of follow) s.removeEventListener('abort', f) }
  for (const s of signals) {
    if (s.aborted) {
      controller.abort(s.reason)
      break
    }
    const f = (): void => { dispose(); controller.abort(s.reason) }
    follow.push([s, f])
    s.addEventListener('abort', f, { once: true })
  }
  if (controller.signal.aborted) dispose()
  return { signal: controller.signal, dispose }
}

export function aborted (signal: AbortSignal): AcquireAborted {
  return new AcquireAborted('the request was aborted by its signal', signal.reason)
}

export class Rest {
  constructor (readonly client: ClientLike, readonly logger: Logger) {}

  /** One request: its parsed answer, or the error for its error answer. `signal` aborts it
   * (`AcquireAborted`); no answer at all is `LockConnectionError`. */
  async send (call: Call, signal?: AbortSignal): Promise<any> {
    if (isAborted(signal)) throw aborted(signal as AbortSignal)
    const options: Record<string, unknown> = { asStream: true, meta: true, headers: call.ndjson === undefined ? HEADERS : NDJSON_HEADERS }
    if (call.timeoutMs !== undefined) options.requestTimeout = call.timeoutMs
    // The transport gets a signal of its own, aborted without a reason: undici rejects with the
    // signal's reason, and a reason that is not an AbortError (the caller's own error) would be
    // taken for a connection failure, retried after a backoff, and reported only then.
    const inner = new AbortController()
    const follow = (): void => { inner.abort() }
    if (signal !== undefined) {
      signal.addEventListener('abort', follow, { once: true })
      options.signal = inner.signal
    }
    const params: { method: string, path: string, body?: string, bulkBody?: string } = { method: call.method, path: call.path }
    if (call.body !== undefined) params.body = stringify(call.body)
    if (call.ndjson !== undefined) params.bulkBody = call.ndjson.map(line => `${stringify(line)}\n`).join('')
    let result: { statusCode: number, headers: Record<string, unknown>, body: Readable, meta?: { connection?: unknown } }
    let text: string
    try {
      result = await this.client.transport.request(params, options) as typeof result
      text = await readAll(result.body, String(result.headers['content-encoding'] ?? ''))
    } catch (e) {
      if (isAborted(signal)) throw aborted(signal as AbortSignal)
      if (e instanceof LockError) throw e
      const error = e as Error
      throw new LockConnectionError(`${error.name}: ${error.message} (${call.method} ${call.path})`, { cause: e })
    } finally {
      signal?.removeEventListener('abort', follow)
    }
    let body: unknown = text
    if (text !== '' && /json/.test(String(result.headers['content-type'] ?? ''))) {
      try {
        body = parse(text)
      } catch (e) {
        throw new LockConnectionError(`unreadable answer to ${call.method} ${call.path}: ${(e as Error).message}`, { cause: e })
      }
    }
    if (result.statusCode >= 400) {
      const error = fromResponse(result.statusCode, body)
      if (error instanceof Unavailable && error.error.node_shutting_down !== undefined && result.meta?.connection != null) {
        // Its node is going away (docs/API.md "Errors"): the retry goes through another node, as
        // the transport itself does with a 503 it handles.
        this.client.connectionPool?.markDead(result.meta.connection)
      }
      throw error
    }
    return body
  }

  /** Sends `makeCall(deadline)` until it is answered. A 503 is retried after a growing backoff
   * while the next attempt still starts before `deadline` (a `performance.now()` time); after that
   * the 503 is thrown. A call that queues asks only for what is left of the budget. */
  async retrying (makeCall: (deadline: number) => Call, deadline: number, signal?: AbortSignal): Promise<any> {
    for (let attempt = 0; ; attempt++) {
      const call = makeCall(deadline)
      try {
        return await this.send(call, signal)
      } catch (e) {
        if (!(e instanceof Unavailable)) throw e
        // The backoff, or the server's `retry_after_ms` when it is longer and fits in the budget.
        const hint = Number(e.error.retry_after_ms ?? 0)
        const wait = backoff(attempt)
        const delay = hint > wait && performance.now() + hint < deadline ? hint : wait
        if (performance.now() + delay >= deadline) throw e
        this.logger.info(`${call.method} ${call.path} answered 503 ${e.type}${nodeShuttingDown(e)}; retry ${attempt + 1} in ${Math.round(delay)} ms`)
        await sleep(delay, signal)
      }
    }
  }

  /** One call retried on 503 for at most `budgetMs`. */
  async simple (method: string, path: string, body: unknown, budgetMs: number, signal?: AbortSignal): Promise<any> {
    const call: Call = { method, path, body }
    return await this.retrying(() => call, performance.now() + budgetMs, signal)
  }
}

function nodeShuttingDown (e: LockError): string {
  const node = e.error.node_shutting_down
  return node === undefined ? '' : ` (node ${String(node)} shutting down)`
}

/** Milliseconds left until `deadline`, at least 0. */
export function millisLeft (deadline: number): number {
  return Math.max(0, Math.floor(deadline - performance.now()))
}

async function readAll (body: Readable | string | Buffer | null | undefined, encoding: string): Promise<string> {
  if (body === null || body === undefined) return ''
  if (typeof body === 'string') return body
  if (Buffer.isBuffer(body)) return body.toString('utf8')
  let stream: Readable = body
  if (encoding.includes('gzip')) stream = body.pipe(createGunzip())
  else if (encoding.includes('deflate')) stream = body.pipe(createInflate())
  const chunks: Buffer[] = []
  for await (const chunk of stream) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as string))
  return Buffer.concat(chunks).toString('utf8')
}
