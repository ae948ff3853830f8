// Concurrent clients over strata's libfdb_c.so (API version 720): read-modify-write
// counters that conflict and retry, atomic adds that never conflict, and the conflict rules
// around snapshot reads and explicit conflict ranges.
'use strict'
const assert = require('assert')
const fdb = require('foundationdb')

fdb.setAPIVersion(720)

const PREFIX = Buffer.from('strata_node_test/concurrency/')
const db = fdb.open().at(PREFIX)
const clearAll = () => db.clearRangeStartsWith(Buffer.alloc(0))
const yieldToOthers = () => new Promise(resolve => setImmediate(resolve))

const int64le = n => { const b = Buffer.alloc(8); b.writeBigInt64LE(BigInt(n)); return b }
const readInt64le = b => (b === undefined ? 0 : Number(b.readBigInt64LE(0)))
const NOT_COMMITTED = 1020

describe('concurrent clients (API 720)', function () {
  beforeEach(clearAll)
  after(clearAll)

  it('read-modify-write increments with doTransaction: conflicts are retried, the sum is exact', async () => {
    const CLIENTS = 8
    const INCREMENTS = 25
    const key = Buffer.from('counter')
    let bodies = 0
    const client = async () => {
      for (let i = 0; i < INCREMENTS; i++) {
        await db.doTransaction(async tn => {
          bodies++
          const value = readInt64le(await tn.get(key))
          await yieldToOthers() // let other clients read the same value
          tn.set(key, int64le(value + 1))
        })
      }
    }
    await Promise.all(Array.from({ length: CLIENTS }, client))
    const retries = bodies - CLIENTS * INCREMENTS
    assert.strictEqual(readInt64le(await db.get(key)), CLIENTS * INCREMENTS)
    assert.ok(retries > 0, 'concurrent read-modify-write transactions must conflict')
  })

  it('a hand-written retry loop sees not_committed (1020) and on_error lets it retry', async () => {
    const CLIENTS = 6
    const INCREMENTS = 20
    const key = Buffer.from('counter2')
    const codes = new Map()
    const increment = async () => {
      const tn = db.rawCreateTransaction()
      for (;;) {
        try {
          const value = readInt64le(await tn.get(key))
          await yieldToOthers()
          tn.set(key, int64le(value + 1))
          await tn.rawCommit()
          return
        } catch (err) {
          assert.ok(err instanceof fdb.FDBError, `unexpected error ${err}`)
          codes.set(err.code, (codes.get(err.code) || 0) + 1)
          await tn.rawOnError(err.code)
        }
      }
    }
    await Promise.all(Array.from({ length: CLIENTS }, async () => {
      for (let i = 0; i < INCREMENTS; i++) await increment()
    }))
    assert.strictEqual(readInt64le(await db.get(key)), CLIENTS * INCREMENTS)
    assert.deepStrictEqual([...codes.keys()], [NOT_COMMITTED], `errors seen: ${[...codes]}`)
    assert.ok(codes.get(NOT_COMMITTED) > 0)
  })

  it('two overlapping transactions: the second writer of a read key gets 1020', async () => {
    const key = Buffer.from('k')
    await db.set(key, int64le(10))
    const a = db.rawCreateTransaction()
    const b = db.rawCreateTransaction()
    assert.strictEqual(readInt64le(await a.get(key)), 10)
    assert.strictEqual(readInt64le(await b.get(key)), 10)
    a.set(key, int64le(11))
    b.set(key, int64le(12))
    await a.rawCommit()
    await assert.rejects(b.rawCommit(), err => err.code === NOT_COMMITTED)
    await b.rawOnError(NOT_COMMITTED) // retryable: resolves, transaction reset
    assert.strictEqual(readInt64le(await b.get(key)), 11)
    b.set(key, int64le(12))
    await b.rawCommit()
    assert.strictEqual(readInt64le(await db.get(key)), 12)
  })

  it('atomic adds from concurrent transactions never conflict', async () => {
    const key = Buffer.from('atomic')
    // All transactions open and written before any commits.
    const N = 50
    const tns = Array.from({ length: N }, () => db.rawCreateTransaction())
    await Promise.all(tns.map(tn => tn.getReadVersion()))
    tns.forEach((tn, i) => tn.add(key, int64le(i + 1)))
    await Promise.all(tns.map(tn => tn.rawCommit()))
    assert.strictEqual(readInt64le(await db.get(key)), (N * (N + 1)) / 2)

    // And through doTransaction, interleaved: no body runs twice.
    const CLIENTS = 8
    const INCREMENTS = 25
    let bodies = 0
    await Promise.all(Array.from({ length: CLIENTS }, async () => {
      for (let i = 0; i < INCREMENTS; i++) {
        await db.doTransaction(async tn => {
          bodies++
          await tn.getReadVersion()
          await yieldToOthers()
          tn.add(key, int64le(1))
        })
      }
    }))
    assert.strictEqual(bodies, CLIENTS * INCREMENTS, 'an atomic add was retried')
    assert.strictEqual(readInt64le(await db.get(key)), (N * (N + 1)) / 2 + CLIENTS * INCREMENTS)
  })

  it('snapshot reads add no conflict; an explicit read conflict key does', async () => {
    const key = Buffer.from('snap')
    await db.set(key, int64le(1))
    // Snapshot read then write: both commit (the later one wins).
    const a = db.rawCreateTransaction()
    const b = db.rawCreateTransaction()
    assert.strictEqual(readInt64le(await a.snapshot().get(key)), 1)
    assert.strictEqual(readInt64le(await b.snapshot().get(key)), 1)
    a.set(key, int64le(2))
    b.set(key, int64le(3))
    await a.rawCommit()
    await b.rawCommit()
    assert.strictEqual(readInt64le(await db.get(key)), 3)

    // The same with an explicit read conflict key on b: b conflicts.
    const c = db.rawCreateTransaction()
    const d = db.rawCreateTransaction()
    await c.snapshot().get(key)
    await d.snapshot().get(key)
    d.addReadConflictKey(key)
    c.set(key, int64le(4))
    d.set(key, int64le(5))
    await c.rawCommit()
    await assert.rejects(d.rawCommit(), err => err.code === NOT_COMMITTED)
    assert.strictEqual(readInt64le(await db.get(key)), 4)

    // A write conflict range on a key another transaction read makes that reader conflict.
    const e = db.rawCreateTransaction()
    const f = db.rawCreateTransaction()
    await e.get(Buffer.from('other'))
    await f.getReadVersion()
    f.addWriteConflictKey(Buffer.from('other'))
    e.set(key, int64le(6))
    await f.rawCommit()
    await assert.rejects(e.rawCommit(), err => err.code === NOT_COMMITTED)
  })

  it('a range read conflicts with an insert into the range', async () => {
    const a = db.rawCreateTransaction()
    const b = db.rawCreateTransaction()
    assert.deepStrictEqual(await a.getRangeAll(Buffer.from('r/'), Buffer.from('r0')), [])
    await b.getReadVersion()
    b.set(Buffer.from('r/x'), Buffer.from('1'))
    a.set(Buffer.from('sum'), Buffer.from('0'))
    await b.rawCommit()
    await assert.rejects(a.rawCommit(), err => err.code === NOT_COMMITTED)
  })
})
