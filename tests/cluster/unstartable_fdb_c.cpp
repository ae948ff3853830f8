// A stand-in for a client library whose network cannot start: the API version is selected
// (once per process, as FoundationDB's: a second selection is api_version_already_set,
// 2201), and fdb_setup_network fails with internal_error (4100)
// (https://apple.github.io/foundationdb/api-c.html, fdb_select_api_version and
// fdb_setup_network; flow/error_definitions.h in apple/foundationdb for the codes).
// (C linkage: these are the names a client library exports.)
extern "C" {
int fdb_get_max_api_version(void) { return 730; }

namespace {
bool selected = false;
}

int fdb_select_api_version_impl(int, int) {
  if (selected) return 2201;
  selected = true;
  return 0;
}
const char* fdb_get_error(int) { return "a stand-in's error"; }
int fdb_setup_network(void) { return 4100; }

#define STUB(name) \
  void fdb_##name(void) {}
STUB(run_network)
STUB(stop_network)
STUB(future_cancel)
STUB(future_destroy)
STUB(future_block_until_ready)
STUB(future_set_callback)
STUB(future_get_error)
STUB(future_get_int64)
STUB(future_get_key)
STUB(future_get_value)
STUB(future_get_keyvalue_array)
STUB(create_database)
STUB(database_destroy)
STUB(database_set_option)
STUB(database_create_transaction)
STUB(transaction_destroy)
STUB(transaction_cancel)
STUB(transaction_set_option)
STUB(transaction_set_read_version)
STUB(transaction_get_read_version)
STUB(transaction_get)
STUB(transaction_get_range)
STUB(transaction_set)
STUB(transaction_atomic_op)
STUB(transaction_clear)
STUB(transaction_clear_range)
STUB(transaction_watch)
STUB(transaction_commit)
STUB(transaction_get_committed_version)
STUB(transaction_get_approximate_size)
STUB(transaction_get_versionstamp)
STUB(transaction_on_error)
STUB(transaction_reset)
STUB(transaction_add_conflict_range)
}
