// fdb_select_api_version_impl and the network calls around it. main.cpp makes the calls
// (they can happen once per process); these tests assert what they returned.
#include <cstring>
#include <string>

#include <gtest/gtest.h>

#include "fdb_c/fdb_c.h"
#include "fdb_c_test_util.hpp"

namespace fdbc_test {
namespace {

TEST(ApiVersion, RuntimeNewerThanHeaderIsInvalid) {
  EXPECT_EQ(env().runtime_newer_than_header, 2202);
}

TEST(ApiVersion, HeaderAbove740IsNotSupported) { EXPECT_EQ(env().header_too_new, 2203); }

TEST(ApiVersion, RuntimeBelow510IsNotSupported) { EXPECT_EQ(env().runtime_too_old, 2203); }

TEST(ApiVersion, HeaderBelow620IsNotSupported) { EXPECT_EQ(env().header_too_old, 2203); }

TEST(ApiVersion, SelectingAfterFailedAttemptsSucceeds) { EXPECT_EQ(env().select, 0); }

TEST(ApiVersion, SecondSelectIsAlreadySet) { EXPECT_EQ(env().second_select, 2201); }

TEST(ApiVersion, FailedSelectsAndSecondSelectDoNotDisturbTheSelectedVersion) {
  // The library still works at 740: a transaction round trip.
  Tr tr = make_tr();
  EXPECT_EQ(get(tr, "fdbc/ApiVersion/none").error, 0);
}

TEST(ApiVersion, MaxApiVersionIs740) {
  EXPECT_EQ(fdb_get_max_api_version(), 740);
  EXPECT_EQ(STRATA_FDB_API_VERSION, 740);
}

// FoundationDB's form: "<release>,<source id>,<protocol version in hex>".
TEST(ApiVersion, ClientVersionNamesTheReleaseAndProtocol) {
  const char* v = fdb_get_client_version();
  ASSERT_NE(v, nullptr);
  EXPECT_STREQ(v, "7.4.0,strata,fdb00b074000000");
}

TEST(Network, StopBeforeSetupIsNetworkNotSetup) { EXPECT_EQ(env().stop_before_setup, 2008); }

TEST(Network, OtherNetworkOptionsAreAccepted) { EXPECT_EQ(env().network_option, 0); }

TEST(Network, SetupOnceThenNetworkAlreadySetup) {
  EXPECT_EQ(env().setup, 0);
  EXPECT_EQ(env().second_setup, 2009);
}

TEST(Network, SecondSetupLaterIsStillAlreadySetup) { EXPECT_EQ(fdb_setup_network(), 2009); }

TEST(Network, CreateDatabaseWithNoClusterFileSucceeds) {
  EXPECT_EQ(env().create_database, 0);
  EXPECT_NE(db(), nullptr);
}

}  // namespace
}  // namespace fdbc_test
