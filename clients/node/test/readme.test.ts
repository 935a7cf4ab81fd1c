/** README.md's TypeScript blocks are excerpts of examples/*.ts (between `// README: <name>` and
 * `// README end`), and those examples run here against the test node. */

import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync, readdirSync } from 'node:fs'
import { join } from 'node:path'

import { quickstart } from '../examples/quickstart'
import { fencing } from '../examples/fencing'
import { errors } from '../examples/errors'
import { more } from '../examples/session'
import { fencedChanges } from '../examples/fenced'
import { URLS } from './helpers'

const PACKAGE = join(__dirname, '..', '..')

function dedent (lines: string[]): string {
  const indent = Math.min(...lines.filter(l => l.trim() !== '').map(l => /^ */.exec(l)![0].length))
  return lines.map(l => l.slice(indent)).join('\n').trim()
}

/** Each example region, dedented, by name. */
function regions (): Map<string, string> {
  const found = new Map<string, string>()
  for (const file of readdirSync(join(PACKAGE, 'examples')).filter(f => f.endsWith('.ts'))) {
    const lines = readFileSync(join(PACKAGE, 'examples', file), 'utf8').split('\n')
    for (let i = 0; i < lines.length; i++) {
      const start = /\/\/ README: (\S+)/.exec(lines[i] as string)
      if (start === null) continue
      const end = lines.findIndex((l, j) => j > i && l.includes('// README end'))
      assert.ok(end > i, `${file}: README region ${start[1]} has no end`)
      found.set(start[1] as string, dedent(lines.slice(i + 1, end)))
    }
  }
  return found
}

describe('README', { timeout: 90_000 }, () => {
  test('every TypeScript block of README.md is an example region, and every region is in README.md', () => {
    const readme = readFileSync(join(PACKAGE, 'README.md'), 'utf8')
    const blocks = [...readme.matchAll(/```ts\n([\s\S]*?)```/g)].map(m => (m[1] as string).trim())
    const examples = regions()
    assert.ok(blocks.length >= 4, `TypeScript blocks in README.md: ${blocks.length}`)
    for (const block of blocks) {
      assert.ok([...examples.values()].includes(block), `a README block that is no example region:\n${block}`)
    }
    for (const [name, region] of examples) assert.ok(blocks.includes(region), `example region ${name} is not in README.md`)
  })

  test('the first lock', async () => {
    const out = await quickstart(URLS[0] as string)
    assert.match(out[0] as string, /^token \d+$/)
    assert.deepEqual(out.slice(1), ['busy: null', 'timed out: 409 lock_wait_timeout_exception', 'report-7 rendered'])
  })

  test('the fencing recipe', async () => {
    const out = await fencing(URLS[0] as string)
    assert.equal(out.length, 1)
    assert.match(out[0] as string, /^refused: (StaleToken|LockLost)$/)
  })

  test('fenced changes and downgrade', async () => {
    const out = await fencedChanges(URLS[0] as string)
    assert.deepEqual(out.slice(0, 2), ['total 5 read back: 5', 'applied applied applied'])
    assert.match(out[2] as string, /^refused: (StaleToken|LockLost)$/)
    assert.equal(out[3], 'shared token kept: true')
    assert.equal(out.length, 4)
  })

  test('errors', async () => {
    const out = await errors(URLS[0] as string)
    assert.match(out[0] as string, /^held by .+\/\d+$/)
  })

  test('sessions, semaphores, elections, read/write locks, aborting', async () => {
    const out = await more(URLS[0] as string)
    assert.match(out[0] as string, /^permits left: [0-3]$/)
    assert.match(out[1] as string, /^leading with term \d+ true$/)
    assert.equal(out[2], 'AbortError')
  })
})
