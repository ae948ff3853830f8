// Versionstamps over strata's libfdb_c.so (API version 720), through the bindings' tuple
// layer: unique per commit, ordered as the commits are, equal to the commit version (8 bytes,
// big-endian) followed by 2 bytes of order within the version, and the same stamp for every
// versionstamped operation of one transaction.
'use strict'
const assert = require('assert')
const fdb = require('foundationdb')

fdb.setAPIVersion(720)

const { tuple } = fdb
const PREFIX = ['strata_node_test', 'versionstamp']
const root = fdb.open()
const tdb = root.withKeyEncoding(fdb.tuple).at(PREFIX).withValueEncoding(fdb.tuple)
const rawPrefix = tuple.pack(PREFIX)
const clearAll = () => tdb.doTn(async tn => { tn.clearRange([]) })
const yieldToOthers = () => new Promise(resolve => setImmediate(resolve))

const NOT_COMMITTED = 1020
const TRANSACTION_CANCELLED = 1025
const NO_COMMIT_VERSION = 2021
const TRANSACTION_INVALID_VERSION = 2020

const isVersionstamp = v => v != null && v.type === 'versionstamp' && Buffer.isBuffer(v.value) && v.value.length === 12

function shuffle (arr, seed) {
  let s = seed >>> 0
  for (let i = arr.length - 1; i > 0; i--) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0
    const j = Math.floor((s / 4294967296) * (i + 1))
    ;[arr[i], arr[j]] = [arr[j], arr[i]]
  }
  return arr
}

describe('versionstamps (API 720)', function () {
  beforeEach(clearAll)
  after(clearAll)

  it('concurrent conflicting transactions: unique stamps, in the order the commits serialized', async () => {
    const N = 60
    const done = []
    let bodies = 0
    await Promise.all(Array.from({ length: N }, async (_, w) => {
      const logKey = ['log', tuple.unboundVersionstamp()]
      const stampValue = ['stamp', tuple.unboundVersionstamp()]
      let used, stampPromise, seq
      await tdb.doTn(async tn => {
        bodies++
        used = tn
        const counter = await tn.get(['counter'])
        seq = counter === undefined ? 0 : counter[0]
        await yieldToOthers() // the others read the same counter: conflicts
        tn.set(['counter'], [seq + 1])
        tn.setVersionstampedKey(logKey, [seq, w]) // user version 0
        tn.setVersionstampedValue(['byseq', seq], stampValue) // user version 1
        stampPromise = tn.getVersionstamp().promise
      })
      const stamp = await stampPromise
      done.push({ w, seq, stamp, version: used.getCommittedVersion(), logKey, stampValue })
    }))
    assert.ok(bodies > N, 'the read-modify-write transactions should have conflicted')

    // The counter serialized the commits: seq 0..N-1, each once.
    assert.deepStrictEqual(done.map(d => d.seq).sort((a, b) => a - b), Array.from({ length: N }, (_, i) => i))
    for (const d of done) {
      assert.ok(Buffer.isBuffer(d.stamp) && d.stamp.length === 10)
      assert.deepStrictEqual(d.stamp.subarray(0, 8), d.version, 'stamp = commit version, big-endian, then 2 bytes')
      // The bindings baked the stamp into the tuples after the commit.
      assert.ok(isVersionstamp(d.logKey[1]))
      assert.deepStrictEqual(d.logKey[1].value, Buffer.concat([d.stamp, Buffer.from([0, 0])]))
      assert.deepStrictEqual(d.stampValue[1].value, Buffer.concat([d.stamp, Buffer.from([0, 1])]))
    }
    assert.strictEqual(new Set(done.map(d => d.stamp.toString('hex'))).size, N, 'versionstamps must be unique')
    const byStamp = done.slice().sort((a, b) => Buffer.compare(a.stamp, b.stamp))
    assert.deepStrictEqual(byStamp.map(d => d.seq), Array.from({ length: N }, (_, i) => i),
      'versionstamp order must be the commit (serialization) order')

    // Read back: the log's keys, in key order, are in commit order.
    const log = await tdb.getRangeAll(['log'])
    assert.strictEqual(log.length, N)
    log.forEach(([key, value], i) => {
      assert.strictEqual(key[0], 'log')
      assert.ok(isVersionstamp(key[1]))
      assert.deepStrictEqual(value[0], i)
      const d = done.find(x => x.seq === i)
      assert.strictEqual(value[1], d.w)
      assert.deepStrictEqual(key[1].value, d.logKey[1].value)
    })
    for (const d of done) {
      const value = await tdb.get(['byseq', d.seq])
      assert.strictEqual(value[0], 'stamp')
      assert.deepStrictEqual(value[1].value, d.stampValue[1].value)
    }
  })

  it('independent transactions committed in a shuffled order: stamps follow the commit order', async () => {
    const N = 50
    const tns = Array.from({ length: N }, (_, i) => {
      const tn = tdb.rawCreateTransaction()
      tn.setVersionstampSuffixedKey(['suffixed'], [i], Buffer.from([i]))
      tn.setVersionstampPrefixedValue(['prefixed', i], [i])
      return { i, tn, stamp: tn.getVersionstamp().promise }
    })
    // All are open at once (read versions taken) before the first commits.
    await Promise.all(tns.map(t => t.tn.getReadVersion()))
    const order = shuffle(tns.slice(), 31337)
    for (const t of order) await t.tn.rawCommit()
    const stamps = await Promise.all(order.map(t => t.stamp))
    for (let k = 1; k < N; k++) {
      assert.ok(Buffer.compare(stamps[k - 1], stamps[k]) < 0, `commit ${k - 1}'s stamp must precede commit ${k}'s`)
      assert.ok(order[k - 1].tn.getCommittedVersion().compare(order[k].tn.getCommittedVersion()) < 0)
    }

    // Keys: prefix, 10-byte stamp, suffix; their key order is the commit order.
    const suffixedPrefix = Buffer.concat([rawPrefix, tuple.pack(['suffixed'])])
    const rows = await root.getRangeAll(suffixedPrefix, fdb.util.strInc(suffixedPrefix))
    assert.deepStrictEqual(rows.map(([k]) => k),
      order.map((t, k) => Buffer.concat([suffixedPrefix, stamps[k], Buffer.from([t.i])])))
    // Values: stamp then the packed value.
    for (let k = 0; k < N; k++) {
      const { stamp, value } = await tdb.getVersionstampPrefixedValue(['prefixed', order[k].i])
      assert.deepStrictEqual(stamp, stamps[k])
      assert.deepStrictEqual(value, [order[k].i])
    }
  })

  it('the stamp future fails with the commit: conflict, read-only, reset', async () => {
    // A conflicting commit: the stamp future gets transaction_invalid_version (2020), as
    // FoundationDB's commitAndWatch gives it whatever failed the commit.
    await tdb.set(['k'], [0])
    const a = tdb.rawCreateTransaction()
    const b = tdb.rawCreateTransaction()
    await a.get(['k'])
    await b.get(['k'])
    a.set(['k'], [1])
    b.set(['k'], [2])
    b.setVersionstampSuffixedKey(['lost'], [0])
    const lost = b.getVersionstamp().promise
    await a.rawCommit()
    await assert.rejects(b.rawCommit(), err => err.code === NOT_COMMITTED)
    await assert.rejects(lost, err => err.code === TRANSACTION_INVALID_VERSION)

    // A read-only commit has no versionstamp.
    const ro = tdb.rawCreateTransaction()
    const roStamp = ro.getVersionstamp().promise
    await ro.get(['k'])
    await ro.rawCommit()
    await assert.rejects(roStamp, err => err.code === NO_COMMIT_VERSION)

    // Reset before commit: transaction_cancelled.
    const c = tdb.rawCreateTransaction()
    c.set(['k'], [3])
    const cancelled = c.getVersionstamp().promise
    c.rawReset()
    await assert.rejects(cancelled, err => err.code === TRANSACTION_CANCELLED)
    assert.deepStrictEqual(await tdb.get(['k']), [1])
  })
})
