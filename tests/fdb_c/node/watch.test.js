// Watches over strata's libfdb_c.so (API version 720): many watches fired by one commit,
// cancellation, the errors a watch gets from its transaction, and a node process that exits
// by itself once its watches are done.
//
// The bindings resolve a watch's promise with true when it fires and with false when it is
// cancelled (1101) or its transaction is reset (1025) or conflicts (1020), unless
// {throwAllErrors: true} asks for those as rejections.
'use strict'
const assert = require('assert')
const path = require('path')
const { spawn } = require('child_process')
const fdb = require('foundationdb')

fdb.setAPIVersion(720)

const PREFIX = Buffer.from('strata_node_test/watch/')
const db = fdb.open().at(PREFIX)
const clearAll = () => db.clearRangeStartsWith(Buffer.alloc(0))
const key = i => Buffer.from(`key${String(i).padStart(4, '0')}`)

const NOT_COMMITTED = 1020
const OPERATION_CANCELLED = 1101
const TRANSACTION_CANCELLED = 1025

// Resolves to the list of indexes of the promises settled so far (without waiting).
async function settledNow (promises) {
  const flags = promises.map(() => false)
  promises.forEach((p, i) => p.then(() => { flags[i] = true }, () => { flags[i] = true }))
  await new Promise(resolve => setImmediate(resolve)) // let already-settled promises report
  return flags.flatMap((f, i) => (f ? [i] : []))
}

describe('watches (API 720)', function () {
  beforeEach(clearAll)
  after(clearAll)

  it('100 watches, one commit changes every key: all fire', async () => {
    const N = 100
    await db.doTn(async tn => { for (let i = 0; i < N; i++) tn.set(key(i), Buffer.from('before')) })
    // Watches from several transactions: half from one, the rest one per transaction.
    const watches = await db.doTn(async tn => {
      const ws = []
      for (let i = 0; i < N / 2; i++) {
        assert.deepStrictEqual(await tn.get(key(i)), Buffer.from('before'))
        ws.push(tn.watch(key(i)))
      }
      return ws
    })
    for (let i = N / 2; i < N; i++) watches.push((await db.getAndWatch(key(i))))
    // Nothing fires before the change (the ones already settled would show here).
    assert.deepStrictEqual(await settledNow(watches.map(w => w.promise)), [])

    await db.doTn(async tn => { for (let i = 0; i < N; i++) tn.set(key(i), Buffer.from(`after ${i}`)) })
    const fired = await Promise.all(watches.map(w => w.promise))
    assert.deepStrictEqual(fired, Array(N).fill(true))
  })

  it('watches fire on a set of a missing key and on a clear', async () => {
    await db.set(key(1), Buffer.from('x'))
    const onMissing = await db.getAndWatch(key(0))
    assert.strictEqual(onMissing.value, undefined)
    const onCleared = await db.getAndWatch(key(1))
    assert.deepStrictEqual(onCleared.value, Buffer.from('x'))
    const onRange = await db.getAndWatch(key(2))
    await db.doTn(async tn => {
      tn.set(key(0), Buffer.from('now here'))
      tn.clear(key(1))
      tn.set(key(2), Buffer.from('y'))
    })
    assert.deepStrictEqual(await Promise.all([onMissing.promise, onCleared.promise]), [true, true])
    // A clear_range over a watched key fires it too.
    const again = await db.getAndWatch(key(2))
    assert.deepStrictEqual(again.value, Buffer.from('y'))
    await db.clearRange(key(0), key(9))
    assert.strictEqual(await again.promise, true)
    assert.strictEqual(await onRange.promise, true)
  })

  it('a cancelled watch resolves false (or rejects with 1101), and a later change is harmless', async () => {
    const w1 = await db.setAndWatch(key(0), Buffer.from('a'))
    const w2 = await db.doTn(async tn => tn.watch(key(0), { throwAllErrors: true }))
    const others = []
    for (let i = 0; i < 20; i++) others.push(await db.getAndWatch(key(0)))
    w1.cancel()
    w2.cancel()
    assert.strictEqual(await w1.promise, false)
    await assert.rejects(w2.promise, err => err.code === OPERATION_CANCELLED)
    w1.cancel() // cancelling again, after it settled, does nothing
    // Cancel half of the others; the rest fire on the change.
    others.slice(0, 10).forEach(w => w.cancel())
    await db.set(key(0), Buffer.from('b'))
    assert.deepStrictEqual(await Promise.all(others.map(w => w.promise)),
      [...Array(10).fill(false), ...Array(10).fill(true)])
  })

  it('a watch gets its transaction\'s fate: reset (1025), conflict (1020)', async () => {
    // Reset before commit.
    const tn = db.rawCreateTransaction()
    const quiet = tn.watch(key(0))
    const loud = tn.watch(key(1), { throwAllErrors: true })
    tn.rawReset()
    assert.strictEqual(await quiet.promise, false)
    await assert.rejects(loud.promise, err => err.code === TRANSACTION_CANCELLED)

    // A commit that conflicts.
    await db.set(key(2), Buffer.from('0'))
    const a = db.rawCreateTransaction()
    const b = db.rawCreateTransaction()
    await a.get(key(2))
    await b.get(key(2))
    const wb = b.watch(key(3), { throwAllErrors: true })
    a.set(key(2), Buffer.from('a'))
    b.set(key(2), Buffer.from('b'))
    await a.rawCommit()
    await assert.rejects(b.rawCommit(), err => err.code === NOT_COMMITTED)
    await assert.rejects(wb.promise, err => err.code === NOT_COMMITTED)
  })

  it('a node process with 100 fired watches and a cancelled one exits by itself', async function () {
    // The child: its own (in-memory) database, 100 watches fired by one commit, one watch
    // cancelled, one watch from a reset transaction; then nothing left to do, so node must
    // exit with no help (no process.exit, no stopNetwork).
    const script = `
      'use strict'
      const assert = require('assert')
      const fdb = require('foundationdb')
      fdb.setAPIVersion(720)
      const db = fdb.open().at('strata_node_test/watch_child/')
      ;(async () => {
        const N = 100
        await db.doTn(async tn => { for (let i = 0; i < N; i++) tn.set('k' + i, 'v') })
        const ws = await db.doTn(async tn => Array.from({ length: N }, (_, i) => tn.watch('k' + i)))
        const cancelled = await db.getAndWatch('never-changed')
        const tn = db.rawCreateTransaction()
        const reset = tn.watch('k0')
        tn.rawReset()
        await db.doTn(async tn => { for (let i = 0; i < N; i++) tn.set('k' + i, 'w') })
        assert.deepStrictEqual(await Promise.all(ws.map(w => w.promise)), Array(N).fill(true))
        cancelled.cancel()
        assert.strictEqual(await cancelled.promise, false)
        assert.strictEqual(await reset.promise, false)
        await db.clearRangeStartsWith('')
        console.log('child done')
      })().catch(err => { console.error(err); process.exitCode = 1 })
    `
    const LIMIT_MS = 30000
    // LD_LIBRARY_PATH and NODE_PATH come from run.sh. The child opens the in-memory
    // database: a durable one (STRATA_FDB_PATH) is locked by this process.
    const env = { ...process.env }
    delete env.STRATA_FDB_PATH
    const child = spawn(process.execPath, ['-e', script], {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
      cwd: path.dirname(__filename)
    })
    let out = ''
    child.stdout.on('data', d => { out += d })
    child.stderr.on('data', d => { out += d })
    const result = await new Promise(resolve => {
      // A deadline for the failure case only; the child normally exits at once.
      const deadline = setTimeout(() => { child.kill('SIGKILL'); resolve('did not exit') }, LIMIT_MS)
      child.on('exit', (code, signal) => { clearTimeout(deadline); resolve({ code, signal }) })
    })
    assert.deepStrictEqual(result, { code: 0, signal: null }, `child output:\n${out}`)
    assert.match(out, /child done/)
  })
})
