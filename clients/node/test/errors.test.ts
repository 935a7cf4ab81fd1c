/** Every `error.type` of docs/API.md's Errors table has a class of its own here (none falls back to
 * `BadRequest`, `Unavailable` or `LockError`), and an answer of that type becomes it. No node. */

import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'

import { BadRequest, LockError, Unavailable, fromResponse } from '../src'

const API = join(__dirname, '..', '..', '..', '..', 'docs', 'API.md')

function errorTable (): Array<[number, string]> {
  const text = readFileSync(API, 'utf8')
  const start = text.indexOf('### Errors')
  const section = text.slice(start, text.indexOf('\n#', start + 10))
  const rows: Array<[number, string]> = []
  for (const line of section.split('\n')) {
    const cells = line.split('|').map(c => c.trim())
    const type = /^`([a-z_]+_exception)`$/.exec(cells[2] ?? '')
    if (/^\d{3}$/.test(cells[1] ?? '') && type !== null) rows.push([Number(cells[1]), type[1] as string])
  }
  return rows
}

describe('error classes', () => {
  test('each error type of docs/API.md maps to a class of its own, with status, type, reason and body', () => {
    const rows = errorTable()
    assert.ok(rows.length >= 17, `rows read: ${rows.length}`)
    for (const [status, type] of rows) {
      const body = { error: { type, reason: 'why', holders: 'worker-1', limit: '4' }, status }
      const error = fromResponse(status, body)
      assert.ok(error instanceof LockError)
      assert.ok(![LockError, BadRequest, Unavailable].includes(error.constructor as typeof LockError), `${status} ${type}: ${error.constructor.name}`)
      assert.equal((error.constructor as typeof LockError).errorType, type)
      assert.deepEqual([error.status, error.type, error.reason, error.body], [status, type, 'why', body])
      assert.equal(error.message, `${status} ${type}: why`)
    }
    assert.equal(fromResponse(400, { error: { type: 'something_new_exception', reason: 'x' } }).constructor, BadRequest)
    assert.equal(fromResponse(503, { error: { type: 'other_exception', reason: 'x' } }).constructor, Unavailable)
    assert.equal(fromResponse(418, 'teapot').reason, 'teapot')
  })
})
