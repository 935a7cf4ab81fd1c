#!/usr/bin/env node
/**
 * The contract driver of the Node.js client (tests/contract/PROTOCOL.md): JSON lines of commands
 * on standard input, one JSON line per command on standard output, each command performed through
 * the client's public API and each error mapped to a kind. It holds no lock logic of its own.
 *
 *     npm run build && node dist/contract/driver.js        # ESLM_URLS=http://127.0.0.1:9200
 *
 * Commands run one after another in the order sent; one sent with `"async": true` is started and
 * answered when it completes, possibly after later ones. Logs go to standard error.
 */

import { createInterface } from 'node:readline'

import { Client } from '@elastic/elasticsearch'

import {
  ClientClosed, type FieldOp, HeldLock, InvalidArgument, BadRequest, LockConflict, LockLost, LockNotHeld, Locks,
  LockWaitTimeout, StaleToken, Unavailable, ops, parseJson, stringifyJson
} from '../src'

type Args = Record<string, unknown>

/** An unknown command, a missing or bad argument: kind `invalid_argument`. */
class ProtocolError extends Error {}

interface Opened { locks: Locks, client: Client }

const clients = new Map<string, Opened>()
const handles = new Map<string, HeldLock>()
/** The handles whose loss the client had signalled before the command that is running now. */
const lostBefore = new WeakSet<HeldLock>()

function log (message: string): void {
  process.stderr.write(`driver: ${message}\n`)
}

function write (answer: Record<string, unknown>): void {
  process.stdout.write(`${stringifyJson(answer)}\n`)
}

function arg<T> (args: Args, name: string, check: (v: unknown) => boolean, what: string): T {
  const value = args[name]
  if (!check(value)) throw new ProtocolError(`[${name}] is required: ${what}`)
  return value as T
}

function optional<T> (args: Args, name: string, check: (v: unknown) => boolean, what: string): T | undefined {
  const value = args[name]
  if (value === undefined || value === null) return undefined
  if (!check(value)) throw new ProtocolError(`[${name}] must be ${what}`)
  return value as T
}

const isString = (v: unknown): boolean => typeof v === 'string' && v !== ''
const isMillis = (v: unknown): boolean => typeof v === 'number' && Number.isInteger(v) && v >= 0
const isBool = (v: unknown): boolean => typeof v === 'boolean'

function opened (args: Args): Opened {
  const name = arg<string>(args, 'client', isString, 'a client name')
  const found = clients.get(name)
  if (found === undefined) throw new ProtocolError(`no client [${name}] was opened`)
  return found
}

function handle (args: Args): HeldLock {
  const name = arg<string>(args, 'handle', isString, 'a handle name')
  const found = handles.get(name)
  if (found === undefined) throw new ProtocolError(`no handle [${name}]`)
  return found
}

function envUrls (): string[] {
  return (process.env.ESLM_URLS ?? '').split(',').map(u => u.trim()).filter(u => u !== '')
}

const COMMANDS: Record<string, (args: Args) => Promise<Record<string, unknown>>> = {
  async open (args) {
    const name = arg<string>(args, 'client', isString, 'a client name')
    const urls = optional<string[]>(args, 'urls', v => Array.isArray(v) && v.length > 0 && v.every(isString), 'a list of URLs') ?? envUrls()
    if (urls.length === 0) throw new ProtocolError('[urls] is required when ESLM_URLS is not set')
    const retryFor = optional<number>(args, 'retry_for_ms', isMillis, 'milliseconds')
    const client = new Client({ nodes: urls })
    const locks = new Locks(client, retryFor === undefined ? {} : { retryFor })
    const previous = clients.get(name)
    clients.set(name, { locks, client })
    if (previous !== undefined) await closeClient(previous)
    return {}
  },

  async lock (args) {
    const { locks } = opened(args)
    const name = arg<string>(args, 'handle', isString, 'a handle name')
    const key = arg<string>(args, 'key', v => typeof v === 'string', 'a key')
    const lease = optional<number>(args, 'lease_ms', isMillis, 'milliseconds')
    const timeout = optional<number>(args, 'timeout_ms', isMillis, 'milliseconds')
    const once = optional<boolean>(args, 'try', isBool, 'true or false') ?? false
    const mode = optional<'exclusive' | 'shared'>(args, 'mode', isString, 'exclusive or shared')
    const keepalive = optional<boolean>(args, 'keepalive', isBool, 'true or false') ?? true
    const options = { lease, mode, watchdog: keepalive }
    let held: HeldLock
    if (once) {
      if (timeout !== undefined) throw new ProtocolError('[timeout_ms] cannot be given with [try]')
      // tryLock answers null when busy; the protocol's try-lock answers the conflict.
      held = await locks.lock(key, { ...options, timeout: 0 })
    } else {
      held = await locks.lock(key, { ...options, timeout })
    }
    handles.set(name, held)
    return { token: held.fencingToken }
  },

  async lock_again (args) {
    const held = handle(args)
    const { locks } = opened({ client: clientOf(held) })
    // An acquire by the owner that holds the lock through this client names its acquisition again:
    // the server answers with the same grant (a nested handle, which releases nothing).
    const again = await locks.lock(held.key, { owner: held.owner, mode: held.mode, timeout: 0 })
    return { token: again.fencingToken }
  },

  async unlock (args) {
    const held = handle(args)
    await held.release()
    return {}
  },

  async renew (args) {
    const held = handle(args)
    const lease = optional<number>(args, 'lease_ms', isMillis, 'milliseconds')
    await held.renew(lease)
    return {}
  },

  async lost (args) {
    return { lost: handle(args).lost }
  },

  async await_lost (args) {
    const held = handle(args)
    const within = arg<number>(args, 'within_ms', isMillis, 'milliseconds')
    const t0 = performance.now()
    if (held.signal.aborted) return { lost: true, after_ms: 0 }
    const lost = await new Promise<boolean>(resolve => {
      const timer = setTimeout(() => { held.signal.removeEventListener('abort', seen); resolve(false) }, within)
      const seen = (): void => { clearTimeout(timer); resolve(true) }
      held.signal.addEventListener('abort', seen, { once: true })
    })
    return lost ? { lost: true, after_ms: Math.round(performance.now() - t0) } : { lost: false }
  },

  async fenced_write (args) {
    const held = handle(args)
    const index = arg<string>(args, 'index', isString, 'an index name')
    // PROTOCOL.md names the document's id `id`, which is also the request's id: a document id of
    // its own is taken from `doc_id` when the harness sends one, else the `id` given, as text.
    const given = args.doc_id ?? args.id
    const id = arg<string>({ id: typeof given === 'number' || typeof given === 'bigint' ? String(given) : given }, 'id', isString, 'a document id (doc_id)')
    const doc = arg<object>(args, 'doc', v => v !== null && typeof v === 'object' && !Array.isArray(v), 'an object')
    await held.index(index, id, doc)
    return {}
  },

  async fenced_update (args) {
    const held = handle(args)
    const index = arg<string>(args, 'index', isString, 'an index name')
    const given = args.doc_id
    const id = arg<string>({ id: typeof given === 'number' || typeof given === 'bigint' ? String(given) : given }, 'id', isString, 'a document id (doc_id)')
    const list = arg<unknown[]>(args, 'ops', v => Array.isArray(v), 'an array of field operations')
    const doc = await held.update(index, id, list.map(fieldOp))
    return { doc }
  },

  async close (args) {
    const name = arg<string>(args, 'client', isString, 'a client name')
    const found = clients.get(name)
    if (found === undefined) throw new ProtocolError(`no client [${name}] was opened`)
    await closeClient(found)
    return {}
  },

  async exit () {
    await closeAll()
    return {}
  }
}

/** A field operation of the protocol (the API's `{op, field, value}`) made by the client's `ops`. */
function fieldOp (entry: unknown): FieldOp {
  if (entry === null || typeof entry !== 'object') throw new ProtocolError(`[ops] entries must be objects, got [${String(entry)}]`)
  const { op, field, value } = entry as { op?: unknown, field?: unknown, value?: unknown }
  const name = field as string
  switch (op) {
    case 'inc': return ops.inc(name, value as number)
    case 'append': return ops.append(name, value)
    case 'set': return ops.set(name, value)
    case 'remove': return ops.remove(name)
    default: throw new ProtocolError(`[ops] op must be inc, append, set or remove, got [${String(op)}]`)
  }
}

const owners = new WeakMap<HeldLock, string>()

function clientOf (held: HeldLock): string {
  const name = owners.get(held)
  if (name === undefined) throw new ProtocolError('the handle\'s client is unknown')
  return name
}

async function closeClient ({ locks, client }: Opened): Promise<void> {
  await locks.close()
  await client.close()
}

async function closeAll (): Promise<void> {
  for (const opened of clients.values()) {
    try {
      await closeClient(opened)
    } catch (e) {
      log(`closing a client: ${String(e)}`)
    }
  }
}

/** The protocol's kind for an error of `command` (see PROTOCOL.md's table). */
function kindOf (error: unknown, command: string, held: HeldLock | undefined): string {
  if (error instanceof ProtocolError) return 'invalid_argument'
  if (error instanceof ClientClosed) return 'closed'
  if (error instanceof LockConflict) return 'conflict'
  if (error instanceof LockWaitTimeout) return 'wait_timeout'
  if (error instanceof LockNotHeld) return 'not_held'
  if (error instanceof StaleToken) return 'stale_token'
  if (error instanceof LockLost) {
    // A release that itself found the grant gone (404) is the server's not_held; a lock the client
    // already knew lost is its lost-lock error.
    if (command === 'unlock' && held !== undefined && !lostBefore.has(held)) return 'not_held'
    return 'lost'
  }
  if (error instanceof Unavailable) return 'unavailable'
  if (error instanceof InvalidArgument || error instanceof BadRequest) return 'invalid_argument'
  return 'other'
}

async function perform (request: Args): Promise<Record<string, unknown>> {
  const id = request.id
  const command = typeof request.cmd === 'string' ? request.cmd : ''
  let held: HeldLock | undefined
  try {
    const run = Object.prototype.hasOwnProperty.call(COMMANDS, command) ? COMMANDS[command] : undefined
    if (run === undefined) throw new ProtocolError(`unknown command [${command}]`)
    if (typeof request.handle === 'string') {
      held = handles.get(request.handle)
      if (held?.lost === true) lostBefore.add(held)
    }
    const result = await run(request)
    if (command === 'lock' && typeof request.client === 'string') {
      const made = handles.get(request.handle as string)
      if (made !== undefined) owners.set(made, request.client)
    }
    return { id, ok: true, ...result }
  } catch (e) {
    const message = e instanceof Error ? e.message : String(e)
    return { id, ok: false, error: { kind: kindOf(e, command, held), message } }
  }
}

async function main (): Promise<void> {
  const lines = createInterface({ input: process.stdin, crlfDelay: Infinity })
  const running = new Set<Promise<void>>()
  for await (const line of lines) {
    if (line.trim() === '') continue
    let request: Args
    try {
      const parsed = parseJson(line)
      if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw new SyntaxError('not an object')
      request = parsed as Args
    } catch (e) {
      write({ id: null, ok: false, error: { kind: 'invalid_argument', message: `not a JSON object: ${(e as Error).message}` } })
      continue
    }
    if (request.async === true) {
      const task: Promise<void> = perform(request).then(write).finally(() => running.delete(task))
      running.add(task)
      continue
    }
    write(await perform(request))
    if (request.cmd === 'exit') {
      await Promise.allSettled(running)
      process.exit(0)
    }
  }
  await Promise.allSettled(running)
  await closeAll()
  process.exit(0)
}

main().catch(e => {
  log(`failed: ${String(e)}`)
  process.exit(1)
})
