// A shared library that is not FoundationDB's client: it has one of the C API's functions
// and lacks the rest (tests/cluster/client_library_test.cpp).
// (C linkage: these are the names a client library exports.)
extern "C" {
int fdb_select_api_version_impl(int runtime_version, int header_version) {
  (void)runtime_version;
  (void)header_version;
  return 0;
}
}
