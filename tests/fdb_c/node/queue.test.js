// FoundationDB's Queue and Priority Queue recipes, written with the bindings' tuple layer,
// run over strata's libfdb_c.so (API version 720).
//
// Queue: items at ('Q', index, 20 random bytes); enqueue reads the last index with a
// snapshot read (conflict-free), dequeue reads and clears the first item.
// Priority queue: items at ('P', priority, count, 20 random bytes); push reads the last count
// of its priority with a snapshot read; pop/peek take the first (min) or last (max) item.
'use strict'
const assert = require('assert')
const crypto = require('crypto')
const fdb = require('foundationdb')

fdb.setAPIVersion(720)

const PREFIX = ['strata_node_test', 'queue']
const db = fdb.open()
// Keys are tuples under PREFIX; values are strings.
const base = db.withKeyEncoding(fdb.tuple).at(PREFIX).withValueEncoding(fdb.encoders.string)

const clearAll = () => base.doTn(async tn => { tn.clearRange([]) })
const yieldToOthers = () => new Promise(resolve => setImmediate(resolve))

// ---- Queue recipe ---------------------------------------------------------------------------

class Queue {
  constructor (space) { this.space = space.at(['Q']) }

  async _lastIndex (tn) {
    const last = await tn.at(this.space).snapshot().getRangeAll([], undefined, { limit: 1, reverse: true })
    return last.length ? last[0][0][0] : 0
  }

  async _firstItem (tn) {
    const first = await tn.at(this.space).getRangeAll([], undefined, { limit: 1 })
    return first.length ? first[0] : undefined
  }

  // Returns the transaction used, so that callers can ask for its committed version.
  async enqueue (value) {
    let used
    await this.space.doTn(async tn => {
      used = tn
      tn.set([(await this._lastIndex(tn)) + 1, crypto.randomBytes(20)], value)
    })
    return used
  }

  async dequeue () {
    let used
    const value = await this.space.doTn(async tn => {
      used = tn
      const item = await this._firstItem(tn)
      if (item === undefined) return undefined
      tn.clear(item[0])
      return item[1]
    })
    return { value, tn: used }
  }

  peek () {
    return this.space.doTn(async tn => {
      const item = await this._firstItem(tn)
      return item === undefined ? undefined : item[1]
    })
  }

  async items () { return this.space.getRangeAll([]) }
}

// ---- Priority queue recipe ------------------------------------------------------------------

class PriorityQueue {
  constructor (space) { this.space = space.at(['P']) }

  async _nextCount (tn, priority) {
    const last = await tn.at(this.space.at([priority])).snapshot()
      .getRangeAll([], undefined, { limit: 1, reverse: true })
    return last.length ? last[0][0][0] + 1 : 0
  }

  push (value, priority) {
    return this.space.doTn(async tn => {
      tn.set([priority, await this._nextCount(tn, priority), crypto.randomBytes(20)], value)
    })
  }

  async pop (max = false) {
    let used
    const result = await this.space.doTn(async tn => {
      used = tn
      const item = await tn.at(this.space).getRangeAll([], undefined, { limit: 1, reverse: max })
      if (!item.length) return undefined
      tn.clear(item[0][0])
      return { key: item[0][0], value: item[0][1] }
    })
    return { item: result, tn: used }
  }

  peek (max = false) {
    return this.space.doTn(async tn => {
      const item = await tn.at(this.space).getRangeAll([], undefined, { limit: 1, reverse: max })
      return item.length ? item[0][1] : undefined
    })
  }
}

const versionOf = tn => tn.getCommittedVersion().readBigInt64BE(0)

// Random integers from a seeded generator, so a failure can be replayed.
function rng (seed) {
  let s = seed >>> 0
  return n => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0
    return Math.floor((s / 4294967296) * n)
  }
}

describe('Queue recipe (tuple layer, API 720)', function () {
  beforeEach(clearAll)
  after(clearAll)

  it('dequeues in FIFO order, peeks without removing, and reports empty', async () => {
    const q = new Queue(base)
    assert.strictEqual(await q.peek(), undefined)
    assert.strictEqual((await q.dequeue()).value, undefined)
    const values = Array.from({ length: 50 }, (_, i) => `item ${i}`)
    for (const v of values) await q.enqueue(v)

    // Keys are (index, 20 random bytes), with indexes 1, 2, 3, ...
    const items = await q.items()
    assert.strictEqual(items.length, values.length)
    items.forEach(([key, value], i) => {
      assert.strictEqual(key.length, 2)
      assert.strictEqual(key[0], i + 1)
      assert.ok(Buffer.isBuffer(key[1]) && key[1].length === 20)
      assert.strictEqual(value, values[i])
    })

    for (let i = 0; i < values.length; i++) {
      assert.strictEqual(await q.peek(), values[i])
      assert.strictEqual(await q.peek(), values[i], 'peek must not remove the item')
      if (i % 10 === 5) await q.enqueue(`late ${i}`)
      assert.strictEqual((await q.dequeue()).value, values[i])
    }
    for (let i = 5; i < values.length; i += 10) assert.strictEqual((await q.dequeue()).value, `late ${i}`)
    assert.strictEqual(await q.peek(), undefined)
    assert.strictEqual((await q.dequeue()).value, undefined)
    assert.deepStrictEqual(await q.items(), [])
  })

  it('delivers every item exactly once to concurrent consumers, each producer in order', async () => {
    const q = new Queue(base)
    const PRODUCERS = 4
    const CONSUMERS = 4
    const PER_PRODUCER = 40
    let producing = PRODUCERS
    const dequeued = [] // { producer, seq, version }

    const producer = async p => {
      for (let i = 0; i < PER_PRODUCER; i++) await q.enqueue(JSON.stringify([p, i]))
      producing--
    }
    const consumer = async () => {
      for (;;) {
        const wasProducing = producing > 0
        const { value, tn } = await q.dequeue()
        if (value === undefined) {
          if (!wasProducing) return // empty after every producer had finished
          await yieldToOthers()
          continue
        }
        const [p, i] = JSON.parse(value)
        dequeued.push({ p, i, version: versionOf(tn) })
      }
    }
    await Promise.all([
      ...Array.from({ length: PRODUCERS }, (_, p) => producer(p)),
      ...Array.from({ length: CONSUMERS }, () => consumer())
    ])

    assert.strictEqual(dequeued.length, PRODUCERS * PER_PRODUCER)
    const seen = new Set(dequeued.map(d => `${d.p}/${d.i}`))
    assert.strictEqual(seen.size, PRODUCERS * PER_PRODUCER, 'an item was dequeued twice')
    // FIFO per producer: an item enqueued after another (by the same producer) is dequeued
    // by a later commit.
    for (let p = 0; p < PRODUCERS; p++) {
      const mine = dequeued.filter(d => d.p === p).sort((a, b) => a.i - b.i)
      for (let k = 1; k < mine.length; k++) {
        assert.ok(mine[k - 1].version < mine[k].version,
          `producer ${p}: item ${mine[k - 1].i} committed at ${mine[k - 1].version}, item ${mine[k].i} at ${mine[k].version}`)
      }
    }
    assert.deepStrictEqual(await q.items(), [])
  })

  it('concurrent enqueues never conflict (snapshot read of the last index)', async () => {
    const q = new Queue(base)
    const N = 60
    let bodies = 0
    await Promise.all(Array.from({ length: N }, (_, i) => q.space.doTn(async tn => {
      bodies++
      const last = await q._lastIndex(tn)
      await yieldToOthers() // every transaction reads before any commits
      tn.set([last + 1, crypto.randomBytes(20)], `c${i}`)
    })))
    assert.strictEqual(bodies, N, 'an enqueue was retried')
    const items = await q.items()
    assert.strictEqual(items.length, N)
    assert.deepStrictEqual(items.map(([, v]) => v).sort(), Array.from({ length: N }, (_, i) => `c${i}`).sort())
  })
})

describe('Priority queue recipe (tuple layer, API 720)', function () {
  beforeEach(clearAll)
  after(clearAll)

  it('pops min and max in priority order, push order within a priority', async () => {
    const pq = new PriorityQueue(base)
    const rand = rng(12345)
    assert.strictEqual(await pq.peek(), undefined)
    assert.strictEqual(await pq.peek(true), undefined)
    assert.strictEqual((await pq.pop()).item, undefined)

    // Model: entries [priority, count, value], sorted by (priority, count).
    // As the recipe does, a push takes the count after the largest one left at its priority.
    const model = []
    const cmp = (a, b) => a[0] - b[0] || a[1] - b[1]
    const push = async () => {
      const priority = rand(7) - 3 // negative priorities too
      const count = model.filter(e => e[0] === priority).reduce((c, e) => Math.max(c, e[1] + 1), 0)
      const value = `v${model.length}-${rand(1e6)}`
      await pq.push(value, priority)
      model.push([priority, count, value])
      model.sort(cmp)
    }
    for (let i = 0; i < 60; i++) await push()

    for (let step = 0; step < 200; step++) {
      const op = rand(5)
      if (op === 0) {
        await push()
      } else {
        const max = op >= 3
        const expected = model.length ? (max ? model[model.length - 1] : model[0]) : undefined
        assert.strictEqual(await pq.peek(max), expected && expected[2])
        const { item } = await pq.pop(max)
        if (expected === undefined) {
          assert.strictEqual(item, undefined)
        } else {
          assert.ok(item !== undefined, `step ${step}: pop(${max}) found nothing`)
          assert.deepStrictEqual([item.key[0], item.key[1], item.value], expected)
          assert.ok(Buffer.isBuffer(item.key[2]) && item.key[2].length === 20)
          if (max) model.pop(); else model.shift()
        }
      }
    }
    while (model.length) {
      const { item } = await pq.pop()
      assert.deepStrictEqual([item.key[0], item.key[1], item.value], model.shift())
    }
    assert.strictEqual((await pq.pop(true)).item, undefined)
  })

  it('concurrent poppers take items in key order, each exactly once', async () => {
    const pq = new PriorityQueue(base)
    const N = 120
    const rand = rng(777)
    // Concurrent pushers (same priorities pushed concurrently may share a count; the random
    // suffix keeps keys distinct).
    await Promise.all(Array.from({ length: 4 }, (_, w) => (async () => {
      for (let i = 0; i < N / 4; i++) await pq.push(`w${w}-${i}`, rand(5))
    })()))
    const all = await pq.space.getRangeAll([])
    assert.strictEqual(all.length, N)

    const popped = []
    await Promise.all(Array.from({ length: 5 }, () => (async () => {
      for (;;) {
        const { item, tn } = await pq.pop()
        if (item === undefined) return
        popped.push({ value: item.value, version: versionOf(tn) })
      }
    })()))

    assert.strictEqual(popped.length, N)
    assert.strictEqual(new Set(popped.map(p => p.value)).size, N, 'an item was popped twice')
    // Serializability: in commit order, each pop took the smallest key left.
    popped.sort((a, b) => (a.version < b.version ? -1 : a.version > b.version ? 1 : 0))
    assert.deepStrictEqual(popped.map(p => p.value), all.map(([, v]) => v))
  })

  it('concurrent pushers and poppers deliver every item exactly once', async () => {
    const pq = new PriorityQueue(base)
    const PUSHERS = 3
    const PER_PUSHER = 40
    let pushing = PUSHERS
    const got = []
    const pusher = async w => {
      for (let i = 0; i < PER_PUSHER; i++) await pq.push(`${w}:${i}`, (w * 7 + i) % 4)
      pushing--
    }
    const popper = async max => {
      for (;;) {
        const wasPushing = pushing > 0
        const { item } = await pq.pop(max)
        if (item === undefined) {
          if (!wasPushing) return
          await yieldToOthers()
          continue
        }
        got.push(item.value)
      }
    }
    await Promise.all([
      ...Array.from({ length: PUSHERS }, (_, w) => pusher(w)),
      popper(false), popper(true), popper(false)
    ])
    const expected = []
    for (let w = 0; w < PUSHERS; w++) for (let i = 0; i < PER_PUSHER; i++) expected.push(`${w}:${i}`)
    assert.deepStrictEqual(got.slice().sort(), expected.sort())
  })
})
