/**
 * JSON with 64-bit integers. Fencing tokens and terms are integers up to 2^63 (the partition's
 * epoch is in their high bits), beyond what a JavaScript number holds exactly (2^53), so answers
 * are read with this parser rather than `JSON.parse`: the values of the token fields
 * (`fencing_token`, `term`) are always `bigint`, and any other integer beyond 2^53 is a `bigint`
 * too rather than a rounded number; every other value is what `JSON.parse` gives. Bodies are
 * written with `stringify`, which writes a `bigint` as its digits.
 */

/** Fields whose integer values are always read as `bigint`. */
export const TOKEN_FIELDS: ReadonlySet<string> = new Set(['fencing_token', 'term'])

const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y
const INTEGER = /^-?\d+$/
const WHITESPACE = /[ \t\n\r]*/y

/** Parses `text` as JSON (see the module's comment for integers). Throws `SyntaxError`. */
export function parse (text: string): unknown {
  let at = 0

  function fail (what: string): never {
    throw new SyntaxError(`${what} at position ${at} of JSON: ${text.slice(Math.max(0, at - 20), at + 20)}`)
  }

  function space (): void {
    WHITESPACE.lastIndex = at
    WHITESPACE.exec(text)
    at = WHITESPACE.lastIndex
  }

  function string (): string {
    // The whole string literal, escapes included, is handed to JSON.parse.
    const start = at
    at++
    for (;;) {
      const c = text.charCodeAt(at)
      if (Number.isNaN(c)) fail('Unterminated string')
      if (c === 0x22) break
      at += c === 0x5c ? 2 : 1
    }
    at++
    return JSON.parse(text.slice(start, at)) as string
  }

  function value (field: string | undefined): unknown {
    space()
    const c = text[at]
    if (c === '{') {
      at++
      const object: Record<string, unknown> = {}
      space()
      if (text[at] === '}') { at++; return object }
      for (;;) {
        space()
        if (text[at] !== '"') fail('Expected a field name')
        const name = string()
        space()
        if (text[at] !== ':') fail('Expected ":"')
        at++
        const v = value(name)
        Object.defineProperty(object, name, { value: v, enumerable: true, writable: true, configurable: true })
        space()
        if (text[at] === ',') { at++; continue }
        if (text[at] === '}') { at++; return object }
        fail('Expected "," or "}"')
      }
    }
    if (c === '[') {
      at++
      const array: unknown[] = []
      space()
      if (text[at] === ']') { at++; return array }
      for (;;) {
        array.push(value(field))
        space()
        if (text[at] === ',') { at++; continue }
        if (text[at] === ']') { at++; return array }
        fail('Expected "," or "]"')
      }
    }
    if (c === '"') return string()
    if (text.startsWith('true', at)) { at += 4; return true }
    if (text.startsWith('false', at)) { at += 5; return false }
    if (text.startsWith('null', at)) { at += 4; return null }
    NUMBER.lastIndex = at
    const match = NUMBER.exec(text)
    if (match === null) fail('Unexpected token')
    at = NUMBER.lastIndex
    const literal = match[0]
    if (INTEGER.test(literal)) {
      const n = Number(literal)
      if ((field !== undefined && TOKEN_FIELDS.has(field)) || !Number.isSafeInteger(n)) return BigInt(literal)
      return n
    }
    return Number(literal)
  }

  const result = value(undefined)
  space()
  if (at !== text.length) fail('Unexpected text after the JSON value')
  return result
}

/** `JSON.stringify` that writes a `bigint` as its digits (a JSON number). */
export function stringify (value: unknown): string {
  if (typeof value === 'bigint') return value.toString()
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null'
  const withJson = value as { toJSON?: () => unknown }
  if (typeof withJson.toJSON === 'function') return stringify(withJson.toJSON())
  if (Array.isArray(value)) {
    return `[${value.map(v => v === undefined || typeof v === 'function' || typeof v === 'symbol' ? 'null' : stringify(v)).join(',')}]`
  }
  const parts: string[] = []
  for (const [k, v] of Object.entries(value)) {
    if (v === undefined || typeof v === 'function' || typeof v === 'symbol') continue
    parts.push(`${JSON.stringify(k)}:${stringify(v)}`)
  }
  return `{${parts.join(',')}}`
}
