// Key selectors and range reads over strata's libfdb_c.so (API version 720), checked against
// a model: a sorted array of every key-value pair in the database, read in the same
// transaction.
//
// Selector (key, orEqual, offset) resolves, as FoundationDB defines it, to the key `offset`
// places after the last key < key (<= key when orEqual), clamped to '' before the first key
// and to '\xff' after the last. getRange(begin, end) returns the pairs with
// resolve(begin) <= key < resolve(end), in reverse when asked, cut at the limit.
//
// Every streaming mode is read through the bindings' own loops (getRangeAll, getRange,
// getRangeBatch), and the batches themselves are checked against docs/fdb_c.md's batching
// rule (strata's: FoundationDB's client leaves batch sizes to its servers).
'use strict'
const assert = require('assert')
const fdb = require('foundationdb')

fdb.setAPIVersion(720)

const { keySelector: ks, StreamingMode } = fdb
const PREFIX = Buffer.from('strata_node_test/selectors/')
const PREFIX_END = fdb.util.strInc(PREFIX)
const EMPTY = Buffer.alloc(0)
const FF = Buffer.from([0xff])
const db = fdb.open() // the root: raw Buffer keys, so the model can see everything

const MODES = ['WantAll', 'Iterator', 'Exact', 'Small', 'Medium', 'Large', 'Serial']
const ITERATOR_BYTES = [4096, 6144, 9216, 13824, 20736, 31104, 46656, 69984, 80000, 120000]
const byteTarget = (mode, iteration) => {
  switch (mode) {
    case StreamingMode.WantAll: case StreamingMode.Serial: return 80000
    case StreamingMode.Small: return 256
    case StreamingMode.Medium: return 1000
    case StreamingMode.Large: return 4096
    case StreamingMode.Exact: return Infinity
    case StreamingMode.Iterator: return ITERATOR_BYTES[Math.min(iteration, ITERATOR_BYTES.length) - 1]
  }
  throw Error(`unknown mode ${mode}`)
}

// A seeded generator, so that a failure can be replayed.
function rng (seed) {
  let s = seed >>> 0
  const next = () => { s = (Math.imul(s, 1664525) + 1013904223) >>> 0; return s / 4294967296 }
  const int = n => Math.floor(next() * n)
  return { int, bool: () => next() < 0.5, pick: arr => arr[int(arr.length)] }
}

// ---- the model -----------------------------------------------------------------------------

const cmp = Buffer.compare
const lowerBound = (keys, k) => { // first index with keys[i] >= k
  let lo = 0; let hi = keys.length
  while (lo < hi) { const mid = (lo + hi) >> 1; if (cmp(keys[mid], k) < 0) lo = mid + 1; else hi = mid }
  return lo
}
const upperBound = (keys, k) => { // first index with keys[i] > k
  let lo = 0; let hi = keys.length
  while (lo < hi) { const mid = (lo + hi) >> 1; if (cmp(keys[mid], k) <= 0) lo = mid + 1; else hi = mid }
  return lo
}
// Resolves a selector to a key of the model, '' or '\xff'.
const resolve = (keys, sel) => {
  const lastBefore = (sel.orEqual ? upperBound(keys, sel.key) : lowerBound(keys, sel.key)) - 1
  const i = lastBefore + sel.offset
  if (i < 0) return EMPTY
  if (i >= keys.length) return FF
  return keys[i]
}
const modelRange = (model, keys, begin, end, limit, reverse) => {
  const b = lowerBound(keys, resolve(keys, begin))
  const e = lowerBound(keys, resolve(keys, end))
  let rows = b < e ? model.slice(b, e) : []
  if (reverse) rows = rows.reverse()
  return limit ? rows.slice(0, limit) : rows
}
// Batch sizes the bindings' loop (getRangeBatch) must see: each batch ends after the row
// that reaches the byte target (key plus value bytes) or at the row limit; the loop asks
// for more while `more` is set, with the limit reduced by the rows received.
const modelBatches = (rows, limit, mode) => {
  const batches = []
  let pos = 0; let iteration = 0; let left = limit
  for (;;) {
    iteration++
    const target = byteTarget(mode, iteration)
    let n = 0; let bytes = 0; let more = false
    while (pos + n < rows.length) {
      bytes += rows[pos + n][0].length + rows[pos + n][1].length
      n++
      if ((left && n === left) || bytes >= target) { more = true; break }
    }
    batches.push(n)
    pos += n
    if (!more) break
    if (left) { left -= n; if (left <= 0) break }
  }
  return batches
}
// `more` after a batch that ends exactly at the end of the range may be either (FoundationDB
// sets it when the limit or byte target ended the batch), so a trailing empty batch is not
// significant.
const dropTrailingEmpty = batches => {
  const out = batches.slice()
  while (out.length > 1 && out[out.length - 1] === 0) out.pop()
  return out
}

const showSel = s => `(${JSON.stringify(s.key.toString('latin1'))}, ${s.orEqual}, ${s.offset})`
const showKey = k => (k === undefined ? 'undefined' : JSON.stringify(k.toString('latin1')))

// ---- data ----------------------------------------------------------------------------------

const ALPHABET = [0x00, 0x01, 0x30, 0x31, 0x7f, 0xfe, 0xff]
const randomSuffix = r => Buffer.from(Array.from({ length: 1 + r.int(5) }, () => r.pick(ALPHABET)))

async function fillRandom (r, count) {
  const data = new Map()
  while (data.size < count) {
    const key = Buffer.concat([PREFIX, randomSuffix(r)])
    const value = Buffer.alloc(r.int(600), r.int(256))
    data.set(key.toString('latin1'), [key, value])
  }
  await db.doTn(async tn => {
    tn.clearRange(PREFIX, PREFIX_END)
    for (const [key, value] of data.values()) tn.set(key, value)
  })
}

// The whole database, read in `tn`: the model for everything `tn` reads.
async function readModel (tn) {
  const model = await tn.snapshot().getRangeAll(EMPTY, FF)
  return { model, keys: model.map(([k]) => k) }
}

function randomSelector (r, model, keys) {
  let key
  const which = r.int(20)
  if (which < 7) key = r.pick(keys.filter(k => k.length >= PREFIX.length && cmp(k, PREFIX) >= 0 && cmp(k, PREFIX_END) < 0))
  else if (which < 14) key = Buffer.concat([PREFIX, randomSuffix(r)])
  else if (which < 16) key = r.bool() ? PREFIX : PREFIX_END
  else if (which < 18) key = EMPTY
  else key = FF
  let offset
  const size = r.int(20)
  if (size < 14) offset = r.int(7) - 3
  else if (size < 17) offset = r.int(41) - 20
  else offset = (r.bool() ? 1 : -1) * (keys.length + 1 + r.int(5))
  return ks(key, r.bool(), offset)
}

describe('key selectors and range reads against a model (API 720)', function () {
  const clear = () => db.clearRange(PREFIX, PREFIX_END)
  after(clear)

  it('getKey resolves every kind of selector, clamped to "" and "\\xff"', async () => {
    const r = rng(20240601)
    for (let round = 0; round < 4; round++) {
      await fillRandom(r, 150 + r.int(150))
      await db.doTn(async tn => {
        const { keys } = await readModel(tn)
        const someKey = () => r.pick(keys)
        // The named constructors.
        for (let i = 0; i < 100; i++) {
          const k = r.bool() ? someKey() : Buffer.concat([PREFIX, randomSuffix(r)])
          for (const sel of [ks.firstGreaterOrEqual(k), ks.firstGreaterThan(k), ks.lastLessThan(k),
            ks.lastLessOrEqual(k), ks.add(ks.firstGreaterOrEqual(k), r.int(7) - 3),
            ks.next(ks.lastLessThan(k)), ks.prev(ks.firstGreaterThan(k))]) {
            const want = resolve(keys, sel)
            const got = await (r.bool() ? tn : tn.snapshot()).getKey(sel)
            assert.deepStrictEqual(got, want.length ? want : undefined,
              `getKey${showSel(sel)}: want ${showKey(want)}, got ${showKey(got)}`)
          }
        }
        // Random selectors, with offsets past both ends.
        for (let i = 0; i < 300; i++) {
          const sel = randomSelector(r, null, keys)
          const want = resolve(keys, sel)
          const got = await tn.getKey(sel)
          assert.deepStrictEqual(got, want.length ? want : undefined,
            `getKey${showSel(sel)}: want ${showKey(want)}, got ${showKey(got)}`)
        }
        // The clamps themselves.
        assert.strictEqual(await tn.getKey(ks.lastLessThan(EMPTY)), undefined)
        assert.strictEqual(await tn.getKey(ks.add(ks.firstGreaterOrEqual(keys[0]), -1)), undefined)
        assert.deepStrictEqual(await tn.getKey(ks.firstGreaterThan(keys[keys.length - 1])), FF)
        assert.deepStrictEqual(await tn.getKey(ks.add(ks.lastLessThan(FF), keys.length + 10)), FF)
        assert.deepStrictEqual(await tn.getKey(ks.firstGreaterOrEqual(FF)), FF)
        assert.deepStrictEqual(await tn.getKey(ks.lastLessThan(FF)), keys[keys.length - 1])
      })
    }
  })

  it('getRange with selectors, limits and reverse, in every streaming mode', async () => {
    const r = rng(777)
    let checked = 0
    for (let round = 0; round < 3; round++) {
      await fillRandom(r, 200 + r.int(150)) // about 100 KB: WANT_ALL needs two batches
      await db.doTn(async tn => {
        const { model, keys } = await readModel(tn)
        const cases = [
          [ks.firstGreaterOrEqual(PREFIX), ks.firstGreaterOrEqual(PREFIX_END)],
          [ks.firstGreaterOrEqual(EMPTY), ks.firstGreaterOrEqual(FF)]
        ]
        while (cases.length < 30) cases.push([randomSelector(r, model, keys), randomSelector(r, model, keys)])
        for (const [begin, end] of cases) {
          for (const limit of [0, 1 + r.int(5), 1 + r.int(400)]) {
            for (const reverse of [false, true]) {
              const want = modelRange(model, keys, begin, end, limit, reverse)
              for (const name of MODES) {
                const mode = StreamingMode[name]
                const what = `getRangeAll(${showSel(begin)}, ${showSel(end)}, limit ${limit}, reverse ${reverse}, ${name})`
                const opts = { limit, reverse, streamingMode: mode }
                if (mode === StreamingMode.Exact && !limit) {
                  await assert.rejects(tn.getRangeAll(begin, end, opts), err => err.code === 2210,
                    `${what} must fail with exact_mode_without_limits (2210)`)
                  continue
                }
                const got = await tn.getRangeAll(begin, end, opts)
                assert.strictEqual(got.length, want.length, `${what}: ${got.length} rows, want ${want.length}`)
                assert.deepStrictEqual(got, want, what)
                checked++
              }
            }
          }
        }
      })
    }
    assert.ok(checked > 1000)
  })

  it('the async iterator (getRange) streams the same rows', async () => {
    const r = rng(99)
    await fillRandom(r, 250)
    await db.doTn(async tn => {
      const { model, keys } = await readModel(tn)
      for (let i = 0; i < 20; i++) {
        const begin = randomSelector(r, model, keys)
        const end = randomSelector(r, model, keys)
        const limit = r.bool() ? 0 : 1 + r.int(300)
        const reverse = r.bool()
        const name = r.pick(MODES.filter(m => m !== 'Exact' || limit))
        const got = []
        for await (const pair of tn.getRange(begin, end, { limit, reverse, streamingMode: StreamingMode[name] })) got.push(pair)
        assert.deepStrictEqual(got, modelRange(model, keys, begin, end, limit, reverse),
          `getRange(${showSel(begin)}, ${showSel(end)}, ${limit}, ${reverse}, ${name})`)
      }
    })
  })

  it('batches follow each streaming mode\'s byte target (docs/fdb_c.md)', async () => {
    const r = rng(4242)
    await fillRandom(r, 320)
    await db.doTn(async tn => {
      const { model, keys } = await readModel(tn)
      const cases = [[ks.firstGreaterOrEqual(PREFIX), ks.firstGreaterOrEqual(PREFIX_END)]]
      while (cases.length < 12) cases.push([randomSelector(r, model, keys), randomSelector(r, model, keys)])
      for (const [begin, end] of cases) {
        for (const limit of [0, 1 + r.int(3), 1 + r.int(300)]) {
          for (const reverse of [false, true]) {
            const rows = modelRange(model, keys, begin, end, 0, reverse)
            for (const name of MODES) {
              if (name === 'Exact' && !limit) continue
              const mode = StreamingMode[name]
              const batches = []
              for await (const batch of tn.getRangeBatch(begin, end, { limit, reverse, streamingMode: mode })) batches.push(batch.length)
              assert.deepStrictEqual(dropTrailingEmpty(batches), dropTrailingEmpty(modelBatches(rows, limit, mode)),
                `batch sizes of getRangeBatch(${showSel(begin)}, ${showSel(end)}, limit ${limit}, reverse ${reverse}, ${name})`)
            }
          }
        }
      }

      // target_bytes: the batch target is the smaller of target_bytes and the mode's.
      const all = modelRange(model, keys, ks.firstGreaterOrEqual(PREFIX), ks.firstGreaterOrEqual(PREFIX_END), 0, false)
      for (const targetBytes of [1, 100, 700, 3000, 50000]) {
        for (const name of ['WantAll', 'Small', 'Large', 'Serial']) {
          const mode = StreamingMode[name]
          const target = Math.min(targetBytes, byteTarget(mode, 1))
          let n = 0; let bytes = 0
          while (n < all.length && bytes < target) { bytes += all[n][0].length + all[n][1].length; n++ }
          const { results, more } = await tn.getRangeRaw(ks.firstGreaterOrEqual(PREFIX), ks.firstGreaterOrEqual(PREFIX_END),
            0, targetBytes, mode, 1, false)
          assert.deepStrictEqual(results, all.slice(0, n), `target_bytes ${targetBytes}, ${name}`)
          if (n < all.length) assert.strictEqual(more, true, `target_bytes ${targetBytes}, ${name}: more`)
        }
      }
      // A batch that ends with the range says so when neither limit nor bytes ended it.
      const small = await tn.getRangeRaw(ks.firstGreaterOrEqual(PREFIX), ks.firstGreaterOrEqual(PREFIX_END),
        all.length + 5, 0, StreamingMode.WantAll, 1, false)
      if (all.reduce((s, [k, v]) => s + k.length + v.length, 0) < 80000) assert.strictEqual(small.more, false)
    })
  })

  it('selectors and ranges see the transaction\'s own uncommitted writes', async () => {
    const r = rng(5150)
    await fillRandom(r, 200)
    for (let round = 0; round < 3; round++) {
      const tn = db.rawCreateTransaction()
      const { model } = await readModel(tn)
      // Random sets, clears and clear_ranges inside the prefix, applied to a copy of the
      // model as well; nothing is committed.
      const mine = new Map(model.map(([k, v]) => [k.toString('latin1'), [k, v]]))
      for (let i = 0; i < 60; i++) {
        const op = r.int(10)
        if (op < 5) {
          const k = Buffer.concat([PREFIX, randomSuffix(r)])
          const v = Buffer.alloc(r.int(300), r.int(256))
          tn.set(k, v)
          mine.set(k.toString('latin1'), [k, v])
        } else if (op < 8) {
          const present = [...mine.values()].filter(([k]) => cmp(k, PREFIX) >= 0 && cmp(k, PREFIX_END) < 0)
          if (!present.length) continue
          const [k] = r.pick(present)
          tn.clear(k)
          mine.delete(k.toString('latin1'))
        } else {
          let a = Buffer.concat([PREFIX, randomSuffix(r)])
          let b = Buffer.concat([PREFIX, randomSuffix(r)])
          if (cmp(a, b) > 0) [a, b] = [b, a]
          tn.clearRange(a, b)
          for (const [s, [k]] of [...mine]) if (cmp(k, a) >= 0 && cmp(k, b) < 0) mine.delete(s)
        }
      }
      const after = [...mine.values()].sort((x, y) => cmp(x[0], y[0]))
      const keys = after.map(([k]) => k)
      for (let i = 0; i < 150; i++) {
        const sel = randomSelector(r, after, keys)
        const want = resolve(keys, sel)
        const got = await (r.bool() ? tn : tn.snapshot()).getKey(sel) // snapshot reads see own writes too
        assert.deepStrictEqual(got, want.length ? want : undefined,
          `round ${round}: getKey${showSel(sel)} after own writes: want ${showKey(want)}, got ${showKey(got)}`)
      }
      for (let i = 0; i < 40; i++) {
        const begin = randomSelector(r, after, keys)
        const end = randomSelector(r, after, keys)
        const limit = r.bool() ? 0 : 1 + r.int(100)
        const reverse = r.bool()
        const name = r.pick(MODES.filter(m => m !== 'Exact' || limit))
        const got = await tn.getRangeAll(begin, end, { limit, reverse, streamingMode: StreamingMode[name] })
        assert.deepStrictEqual(got, modelRange(after, keys, begin, end, limit, reverse),
          `round ${round}: getRangeAll(${showSel(begin)}, ${showSel(end)}, ${limit}, ${reverse}, ${name}) after own writes`)
      }
      for (const [k, v] of after.slice(0, 50)) assert.deepStrictEqual(await tn.get(k), v)
      tn.rawCancel()
    }
  })

  it('invalid range arguments fail as FoundationDB\'s client does', async () => {
    await db.doTn(async tn => {
      const b = ks.firstGreaterOrEqual(PREFIX)
      const e = ks.firstGreaterOrEqual(PREFIX_END)
      // -1 is "unlimited", as 0 (FoundationDB's GetRangeLimits); below it is invalid.
      await assert.rejects(tn.getRangeRaw(b, e, -2, 0, StreamingMode.WantAll, 1, false),
        err => err.code === 2012, 'limit below -1: range_limits_invalid (2012)')
      await assert.rejects(tn.getRangeRaw(b, e, 0, -2, StreamingMode.WantAll, 1, false),
        err => err.code === 2012, 'target_bytes below -1: range_limits_invalid (2012)')
      await tn.getRangeRaw(b, e, -1, -1, StreamingMode.WantAll, 1, false)
      await assert.rejects(tn.getRangeRaw(b, e, 0, 0, StreamingMode.Exact, 1, false),
        err => err.code === 2210, 'EXACT without a limit: exact_mode_without_limits (2210)')
      await assert.rejects(tn.getRangeRaw(b, e, 0, 0, StreamingMode.Iterator, 0, false),
        err => err.code === 2000, 'ITERATOR at iteration 0: client_invalid_operation (2000)')
    })
  })
})
