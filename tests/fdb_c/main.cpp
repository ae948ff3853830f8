// main() for strata_fdb_c_test. The API version and the network are process-global and can
// be set up once per process, so a global environment does it before the first test: the
// failing fdb_select_api_version_impl calls first (their results are asserted in
// api_version_test.cpp), then API 740 (FoundationDB 7.4's, the newest), fdb_setup_network and
// fdb_run_network on a thread of its own; at the end it stops the network and checks
// fdb_run_network returned 0.
#include <thread>

#include <gtest/gtest.h>

#include "fdb_c/fdb_c.h"
#include "fdb_c_test_util.hpp"

namespace fdbc_test {
namespace {

class NetworkEnvironment : public ::testing::Environment {
 public:
  void SetUp() override {
    ProcessState& e = env();
    e.runtime_newer_than_header = fdb_select_api_version_impl(740, 730);
    e.header_too_new = fdb_select_api_version_impl(750, 750);
    e.runtime_too_old = fdb_select_api_version_impl(500, 740);
    e.header_too_old = fdb_select_api_version_impl(610, 610);
    e.select = fdb_select_api_version_impl(740, 740);
    e.second_select = fdb_select_api_version_impl(740, 740);
    ASSERT_EQ(e.select, 0) << fdb_get_error(e.select);

    e.stop_before_setup = fdb_stop_network();
    // DISABLE_MULTI_VERSION_CLIENT_API (60): a bindings' usual choice; accepted, no effect.
    e.network_option = fdb_network_set_option(60, nullptr, 0);
    e.setup = fdb_setup_network();
    ASSERT_EQ(e.setup, 0) << fdb_get_error(e.setup);
    e.second_setup = fdb_setup_network();

    network_ = std::thread([this] { run_result_ = fdb_run_network(); });
    e.network_thread = network_.get_id();

    e.create_database = fdb_create_database(nullptr, &e.db);
    ASSERT_EQ(e.create_database, 0) << fdb_get_error(e.create_database);
  }

  void TearDown() override {
    ProcessState& e = env();
    if (e.db != nullptr) fdb_database_destroy(e.db);
    e.db = nullptr;
    if (network_.joinable()) {
      EXPECT_EQ(fdb_stop_network(), 0);
      network_.join();
      EXPECT_EQ(run_result_, 0) << fdb_get_error(run_result_);
    }
  }

 private:
  std::thread network_;
  fdb_error_t run_result_ = -1;
};

}  // namespace
}  // namespace fdbc_test

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  ::testing::AddGlobalTestEnvironment(new fdbc_test::NetworkEnvironment);
  return RUN_ALL_TESTS();
}
