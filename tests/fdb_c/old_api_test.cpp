// strata_fdb_c_old_api_test: the C API at API version 510, the oldest strata takes (with
// header version 620, the oldest header it takes), in an executable of its own: a process
// selects one API version. Before 520 a versionstamped key's operand ended with a 2-byte
// offset and a versionstamped value's had no offset at all, its stamp at the start;
// FoundationDB's client widens both to today's 4-byte offset.
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "fdb_c/fdb_c.h"
#include "fdb_c_test_util.hpp"

namespace fdbc_test {
namespace {

TEST(OldApiVersion, VersionstampOperandsOfAPIFiveTen) {
  ASSERT_EQ(fdb_select_api_version_impl(510, 620), 0);
  ASSERT_EQ(fdb_setup_network(), 0);
  // The network thread, stopped and joined however the test ends.
  struct Network {
    fdb_error_t run_result = -1;
    std::thread thread{[this] { run_result = fdb_run_network(); }};
    ~Network() {
      if (thread.joinable()) {
        fdb_stop_network();
        thread.join();
      }
    }
  } network;
  env().network_thread = network.thread.get_id();
  FDBDatabase* d = nullptr;
  ASSERT_EQ(fdb_create_database(nullptr, &d), 0);
  env().db = d;

  const std::string stamp_slot(10, '\0');
  Tr tr = make_tr();
  // A value with no offset: the stamp takes its first 10 bytes, the rest is kept whole
  // (not its last two bytes read as half an offset: 0x5958 here, past the end).
  atomic(tr, "old/value", stamp_slot + "XY", FDB_MUTATION_TYPE_SET_VERSIONSTAMPED_VALUE);
  // A key with a 2-byte offset (1: after the "k").
  atomic(tr, "k" + stamp_slot + std::string("\x01\x00", 2), "v",
         FDB_MUTATION_TYPE_SET_VERSIONSTAMPED_KEY);
  ASSERT_EQ(commit(tr), 0);

  Value v = read("old/value");
  ASSERT_EQ(v.error, 0);
  ASSERT_TRUE(v.present);
  ASSERT_EQ(v.value.size(), 12U);
  EXPECT_EQ(v.value.substr(10), "XY");
  const std::string stamp = v.value.substr(0, 10);
  EXPECT_NE(stamp, stamp_slot);
  Value k = read("k" + stamp);  // the same commit's stamp, at offset 1 of the key
  ASSERT_EQ(k.error, 0);
  EXPECT_TRUE(k.present);
  EXPECT_EQ(k.value, "v");

  tr.reset();
  fdb_database_destroy(d);
  env().db = nullptr;
  ASSERT_EQ(fdb_stop_network(), 0);
  network.thread.join();
  EXPECT_EQ(network.run_result, 0);
}

}  // namespace
}  // namespace fdbc_test
