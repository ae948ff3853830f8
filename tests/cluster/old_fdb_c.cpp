// A stand-in for a client library too old for strata: every function strata calls exists
// (as a stub that is never called), and the newest API version is 700, FoundationDB 7.0's
// (tests/cluster/client_library_test.cpp).
// (C linkage: these are the names a client library exports.)
extern "C" {
int fdb_get_max_api_version(void) { return 700; }

#define STUB(name) \
  void fdb_##name(void) {}
STUB(select_api_version_impl)
STUB(get_error)
STUB(setup_network)
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
