// FoundationDB's Node.js binding (npm "foundationdb") over strata's libfdb_c.so: the
// database lives in this process, in memory, or on disk with STRATA_FDB_PATH. The same
// program runs against a FoundationDB cluster when the loader finds FoundationDB's own
// libfdb_c.so instead.
//
//   npm install foundationdb@2.0.1      (README.md, "FoundationDB's bindings"; run.sh does it)
//   LD_LIBRARY_PATH=$PREFIX/lib node app.js
//   STRATA_FDB_PATH=/var/lib/app/db LD_LIBRARY_PATH=$PREFIX/lib node app.js
'use strict'
const fdb = require('foundationdb')

fdb.setAPIVersion(720)

async function main () {
  const db = fdb.open()
  // Keys are tuples under ("people",), values strings: strata's tuple bytes are the same.
  const people = db.withKeyEncoding(fdb.tuple).at(['people']).withValueEncoding(fdb.encoders.string)
  await people.doTn(async tn => {
    tn.set([42, 'name'], 'Ada')
    tn.set([42, 'email'], 'ada@example.com')
  })
  for (const [key, value] of await people.getRangeAllStartsWith([42])) {
    console.log(`person ${key[0]} ${key[1]}: ${value}`)
  }

  // Atomic adds: 8-byte little-endian counters, no conflicts between adders.
  const counters = db.withKeyEncoding(fdb.tuple).at(['counters'])
  const one = Buffer.alloc(8)
  one.writeBigInt64LE(1n)
  await Promise.all(Array.from({ length: 10 }, () => counters.add(['visits'], one)))
  console.log(`visits: ${(await counters.get(['visits'])).readBigInt64LE()}`)

  // A watch: resolves with true once the key changes.
  const watch = await people.getAndWatch([42, 'name'])
  console.log(`name before: ${watch.value}`)
  await people.set([42, 'name'], 'Ada Lovelace')
  console.log(`watch fired: ${await watch.promise}`)
  console.log(`name after: ${await people.get([42, 'name'])}`)

  db.close()
}

main().catch(err => {
  console.error(err)
  process.exitCode = 1
})

// Output:
//   person 42 email: ada@example.com
//   person 42 name: Ada
//   visits: 10
//   name before: Ada
//   watch fired: true
//   name after: Ada Lovelace
