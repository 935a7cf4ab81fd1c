/**
 * The locks a `Locks` holds now, counted per (owner, scope, key). The server answers a second
 * acquire of a held lock by the same owner *and the same acquisition* with the same grant
 * (`"reentrant": true`, docs/API.md "Acquisitions"), so a nested acquire names the acquisition
 * this client already holds the lock under, and only the outer handle releases it. An answer
 * `reentrant` for a lock this client does not count (a retry whose first attempt was granted
 * unseen) is an ordinary grant.
 */

import type { Grant, HeldLock } from './held'
import type { Target } from './options'

interface Hold {
  count: number
  acquisition: string | undefined
  outer: HeldLock
}

function id (owner: string, scope: string, key: string): string {
  return `${owner}\u0000${scope}\u0000${key}`
}

export class Holds {
  private readonly holds = new Map<string, Hold>()

  /** The acquisition under which this client holds every one of `targets` for `owner` (a nested
   * acquire names it again, so the server answers with the same grant), else undefined. */
  acquisitionOf (owner: string, targets: readonly Target[]): string | undefined {
    const found = targets.map(t => this.holds.get(id(owner, t.scope, t.key)))
    const ids = new Set(found.map(h => h?.acquisition))
    return found.every(h => h !== undefined) && ids.size === 1 ? [...ids][0] : undefined
  }

  /** Counts `owner`'s `grants` of `acquisition`; answers the outer handle when they are nested in
   * a hold of this client (the server said `reentrant` and this client holds every one). */
  enter (owner: string, grants: readonly Grant[], reentrant: boolean, acquisition: string | undefined,
    handle: HeldLock): HeldLock | undefined {
    const existing = grants.map(g => this.holds.get(id(owner, g.scope, g.key)))
    const outer = reentrant && existing.every(h => h !== undefined) ? existing[0]?.outer : undefined
    for (const g of grants) {
      const hold = this.holds.get(id(owner, g.scope, g.key))
      if (hold !== undefined && outer !== undefined) {
        hold.count++
      } else {
        this.holds.set(id(owner, g.scope, g.key), { count: (hold?.count ?? 0) + 1, acquisition, outer: handle })
      }
    }
    return outer
  }

  leave (owner: string, grants: readonly Grant[]): void {
    for (const g of grants) {
      const key = id(owner, g.scope, g.key)
      const hold = this.holds.get(key)
      if (hold === undefined) continue
      hold.count--
      if (hold.count <= 0) this.holds.delete(key)
    }
  }
}
