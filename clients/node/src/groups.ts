/**
 * Groups (docs/API.md "Groups"): named sets of live members with capabilities (any JSON value),
 * for group membership as tooz, ZooKeeper and etcd recipes offer it. A member holds its membership
 * under a lease it renews (`heartbeatGroup`) or a session, and leaves by itself when that ends.
 * The same calls as the Python client's `eslm/groups.py`; 503s are retried for `retryFor`
 * (`observeGroup`: within its wait).
 */

import { InvalidArgument } from './errors'
import { type Duration, checkKnown, checkName, describe, toMillis } from './options'
import { type Rest, WAIT_MARGIN_MS, millisLeft } from './rest'
import type { Session } from './session'

function groupPath (name: string, action = ''): string {
  return `/_groups/${encodeURIComponent(checkName(name, 'group'))}${action === '' ? '' : `/_${action}`}`
}

export interface JoinOptions {
  /** What the member publishes: any JSON value, at most 1024 bytes as JSON. */
  capabilities?: unknown
  /** Names this membership (default: the member's name), so a retried join gets it back. */
  acquisition?: string
  /** The membership's lease (default: the server's); renew it with `heartbeatGroup`. */
  lease?: Duration
  /** Be a member under this session (its keep-alive keeps the membership). */
  session?: Session | string
}

export abstract class GroupApi {
  /** @internal */ abstract readonly rest: Rest
  abstract readonly retryForMs: number

  private async groupCall (method: string, name: string, action = '', body?: unknown): Promise<any> {
    return await this.rest.simple(method, groupPath(name, action), body, this.retryForMs)
  }

  /** Creates group `name` (`PUT /_groups/{name}`); `GroupAlreadyExists` when it exists. */
  async createGroup (name: string): Promise<any> {
    return await this.groupCall('PUT', name)
  }

  /** Deletes group `name`, which must have no member (`GroupNotEmpty` otherwise). */
  async deleteGroup (name: string): Promise<any> {
    return await this.groupCall('DELETE', name)
  }

  /** `{groups: [names]}` of the whole cluster. */
  async groups (): Promise<any> {
    return await this.rest.simple('GET', '/_groups', undefined, this.retryForMs)
  }

  /** `{group, members: [{member, capabilities, fencing_token, lease_ms, session}], version}`. */
  async group (name: string): Promise<any> {
    return await this.groupCall('GET', name)
  }

  /** Joins group `name` as `member`; answers the grant (`fencing_token`, `lease_ms`, `capabilities`). */
  async joinGroup (name: string, member: string, options: JoinOptions = {}): Promise<any> {
    checkKnown(options, ['capabilities', 'acquisition', 'lease', 'session'], 'joinGroup')
    const body: Record<string, unknown> = {
      member: checkName(member, 'member'),
      acquisition: options.acquisition === undefined ? member : checkName(options.acquisition, 'acquisition')
    }
    if (options.capabilities !== undefined) body.capabilities = options.capabilities
    if (options.lease !== undefined) body.lease = toMillis(options.lease, 'lease')
    if (options.session !== undefined) body.session = typeof options.session === 'string' ? options.session : options.session.id
    return await this.groupCall('POST', name, 'join', body)
  }

  /** Leaves group `name` (`LockNotHeld` when `member` is not in it). */
  async leaveGroup (name: string, member: string, options: { acquisition?: string } = {}): Promise<any> {
    checkKnown(options, ['acquisition'], 'leaveGroup')
    return await this.groupCall('POST', name, 'leave', { member: checkName(member, 'member'), acquisition: options.acquisition ?? member })
  }

  /** Renews `member`'s lease in group `name` (for `lease`, default the server's). */
  async heartbeatGroup (name: string, member: string, options: { acquisition?: string, lease?: Duration } = {}): Promise<any> {
    checkKnown(options, ['acquisition', 'lease'], 'heartbeatGroup')
    const body: Record<string, unknown> = { member: checkName(member, 'member'), acquisition: options.acquisition ?? member }
    if (options.lease !== undefined) body.lease = toMillis(options.lease, 'lease')
    return await this.groupCall('POST', name, 'heartbeat', body)
  }

  /** Replaces `member`'s capabilities in group `name` (undefined: none). */
  async updateMember (name: string, member: string, capabilities?: unknown): Promise<any> {
    const body: Record<string, unknown> = { member: checkName(member, 'member') }
    if (capabilities !== undefined) body.capabilities = capabilities
    return await this.groupCall('POST', name, 'update', body)
  }

  /** Waits at most `wait` (default 30s) until group `name` is not at `version` (0: none known): the
   * group with `changed: true`, or `changed: false` when the wait ran out. */
  async observeGroup (name: string, options: { version?: number | bigint, wait?: Duration, signal?: AbortSignal } = {}): Promise<any> {
    checkKnown(options, ['version', 'wait', 'signal'], 'observeGroup')
    const version = options.version ?? 0
    if (!((typeof version === 'number' && Number.isSafeInteger(version) && version >= 0) || (typeof version === 'bigint' && version >= 0n))) {
      throw new InvalidArgument(`[version] must be a group's version (a whole number, 0 for none), got [${describe(version)}]`)
    }
    const waitMs = toMillis(options.wait ?? '30s', 'wait')
    const path = groupPath(name, 'observe')
    return await this.rest.retrying(deadline => ({
      method: 'GET',
      path: `${path}?version=${version}&wait=${millisLeft(deadline)}ms`,
      timeoutMs: millisLeft(deadline) + WAIT_MARGIN_MS
    }), performance.now() + waitMs, options.signal)
  }
}
