// Preflight for run.sh: the npm package's native module loads, the libfdb_c.so it loaded
// is strata's (from STRATA_FDB_C_LIBDIR), and one write and read round-trip. Then node
// must exit by itself.
'use strict'
const assert = require('assert')
const fs = require('fs')
const path = require('path')

const fdb = require('foundationdb')
fdb.setAPIVersion(720)
const db = fdb.open()

// Which libfdb_c.so did the dynamic loader map? (Linux: /proc/self/maps.)
if (fs.existsSync('/proc/self/maps')) {
  const mapped = new Set(fs.readFileSync('/proc/self/maps', 'utf8').split('\n')
    .map(line => line.trim().split(/\s+/).slice(5).join(' '))
    .filter(file => path.basename(file).startsWith('libfdb_c')))
  assert.deepStrictEqual([...mapped].map(f => fs.realpathSync(f)),
    [fs.realpathSync(path.join(process.env.STRATA_FDB_C_LIBDIR, 'libfdb_c.so'))],
    'the native module must load strata\'s libfdb_c.so')
}

const key = Buffer.from('strata_node_test/preflight')
;(async () => {
  await db.set(key, Buffer.from('ok'))
  assert.deepStrictEqual(await db.get(key), Buffer.from('ok'))
  await db.clear(key)
  assert.strictEqual(await db.get(key), undefined)
  console.log('preflight: foundationdb', require('foundationdb/package.json').version,
    'loaded', path.join(process.env.STRATA_FDB_C_LIBDIR, 'libfdb_c.so'))
})().catch(err => {
  console.error(err)
  process.exitCode = 1
})
