// REPORT_CONFLICTING_KEYS through the bindings (API version 720): after a commit fails
// with not_committed, the special key range \xff\xff/transaction/conflicting_keys/ names
// the read that conflicted, as FoundationDB's client encodes it (begin "1", end "0").
'use strict'
const assert = require('assert')
const fdb = require('foundationdb')

fdb.setAPIVersion(720)

const PREFIX = 'strata_node_test/conflicting_keys/'
const db = fdb.open()
const key = s => Buffer.from(PREFIX + s)
const latin1 = s => Buffer.from(s, 'latin1')
const MODULE = '\xff\xff/transaction/conflicting_keys/'
const NOT_COMMITTED = 1020

// The rows of a special-key namespace as [key, value] strings (latin1 keeps every byte).
async function rowsOf (tn, ns) {
  const rows = await tn.getRangeAll(latin1(ns), latin1(ns + '\xff\xff'))
  return rows.map(([k, v]) => [k.toString('latin1'), v.toString()])
}

describe('conflicting keys (API 720)', function () {
  const clearAll = () => db.clearRangeStartsWith(Buffer.from(PREFIX))
  beforeEach(clearAll)
  after(clearAll)

  it('a failed commit names the read that conflicted, and only it', async () => {
    const tn = db.rawCreateTransaction({ report_conflicting_keys: true })
    await tn.get(key('a'))
    await tn.get(key('b'))
    await db.set(key('b'), 'written meanwhile')
    tn.set(key('c'), 'x')
    await assert.rejects(tn.rawCommit(), err => err.code === NOT_COMMITTED)
    assert.deepStrictEqual(await rowsOf(tn, MODULE), [
      [MODULE + PREFIX + 'b', '1'],
      [MODULE + PREFIX + 'b\x00', '0']
    ])
  })

  it('without the option the module is empty', async () => {
    const tn = db.rawCreateTransaction()
    await tn.get(key('b'))
    await db.set(key('b'), 'written meanwhile')
    tn.set(key('c'), 'x')
    await assert.rejects(tn.rawCommit(), err => err.code === NOT_COMMITTED)
    assert.deepStrictEqual(await rowsOf(tn, MODULE), [])
  })
})
