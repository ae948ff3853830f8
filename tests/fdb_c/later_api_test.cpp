// The rest of FoundationDB's 7.2 C API (docs/decisions/0018): tenants, blob granules,
// mapped ranges and the administration calls. strata answers as a default cluster would:
// tenant mode disabled, no blob granules, no worker processes. The point of most of these
// functions is that they exist: FoundationDB's Python binding resolves every one it wraps
// when it loads, and its Go binding links against them.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "fdb_c/fdb_c.h"
#include "fdb_c_test_util.hpp"
#include <dlfcn.h>

namespace fdbc_test {
namespace {

constexpr fdb_error_t kOperationCancelled = 1101;
constexpr fdb_error_t kClientInvalidOperation = 2000;
constexpr fdb_error_t kUnsupportedOperation = 2108;
constexpr fdb_error_t kTenantsDisabled = 2136;
constexpr uint64_t kProtocol74 = 0x0FDB00B074000000;

struct TenantDeleter {
  void operator()(FDBTenant* t) const { fdb_tenant_destroy(t); }
};
using Tenant = std::unique_ptr<FDBTenant, TenantDeleter>;

Tenant open_tenant(FDBDatabase* d, std::string_view name) {
  FDBTenant* t = nullptr;
  EXPECT_EQ(fdb_database_open_tenant(d, u8(name), len(name), &t), 0);
  return Tenant(t);
}

Tr tenant_tr(FDBTenant* t) {
  FDBTransaction* tr = nullptr;
  EXPECT_EQ(fdb_tenant_create_transaction(t, &tr), 0);
  return Tr(tr);
}

int64_t int64_of(const Future& f) {
  int64_t v = -1;
  EXPECT_EQ(fdb_future_get_int64(f.get(), &v), 0);
  return v;
}

// Every function of FoundationDB 7.2's fdb_c.h for API versions 620 and up (the older
// ones, fdb_create_cluster and the like, are gone from that header's current versions).
TEST(LaterApi, EveryFunctionOfTheSevenTwoHeaderIsExported) {
  const std::vector<const char*> names = {
      "fdb_add_network_thread_completion_hook",
      "fdb_create_database",
      "fdb_create_database_from_connection_string",
      "fdb_database_blobbify_range",
      "fdb_database_create_snapshot",
      "fdb_database_create_transaction",
      "fdb_database_destroy",
      "fdb_database_force_recovery_with_data_loss",
      "fdb_database_get_main_thread_busyness",
      "fdb_database_get_server_protocol",
      "fdb_database_list_blobbified_ranges",
      "fdb_database_open_tenant",
      "fdb_database_purge_blob_granules",
      "fdb_database_reboot_worker",
      "fdb_database_set_option",
      "fdb_database_unblobbify_range",
      "fdb_database_verify_blob_range",
      "fdb_database_wait_purge_granules_complete",
      "fdb_error_predicate",
      "fdb_future_block_until_ready",
      "fdb_future_cancel",
      "fdb_future_destroy",
      "fdb_future_get_bool",
      "fdb_future_get_error",
      "fdb_future_get_granule_summary_array",
      "fdb_future_get_int64",
      "fdb_future_get_key",
      "fdb_future_get_key_array",
      "fdb_future_get_keyrange_array",
      "fdb_future_get_keyvalue_array",
      "fdb_future_get_mappedkeyvalue_array",
      "fdb_future_get_string_array",
      "fdb_future_get_uint64",
      "fdb_future_get_value",
      "fdb_future_is_ready",
      "fdb_future_release_memory",
      "fdb_future_set_callback",
      "fdb_get_client_version",
      "fdb_get_error",
      "fdb_get_max_api_version",
      "fdb_network_set_option",
      "fdb_result_destroy",
      "fdb_result_get_keyvalue_array",
      "fdb_run_network",
      "fdb_select_api_version_impl",
      "fdb_setup_network",
      "fdb_stop_network",
      "fdb_tenant_blobbify_range",
      "fdb_tenant_create_transaction",
      "fdb_tenant_destroy",
      "fdb_tenant_list_blobbified_ranges",
      "fdb_tenant_purge_blob_granules",
      "fdb_tenant_unblobbify_range",
      "fdb_tenant_verify_blob_range",
      "fdb_tenant_wait_purge_granules_complete",
      "fdb_transaction_add_conflict_range",
      "fdb_transaction_atomic_op",
      "fdb_transaction_cancel",
      "fdb_transaction_clear",
      "fdb_transaction_clear_range",
      "fdb_transaction_commit",
      "fdb_transaction_destroy",
      "fdb_transaction_get",
      "fdb_transaction_get_addresses_for_key",
      "fdb_transaction_get_approximate_size",
      "fdb_transaction_get_blob_granule_ranges",
      "fdb_transaction_get_committed_version",
      "fdb_transaction_get_estimated_range_size_bytes",
      "fdb_transaction_get_key",
      "fdb_transaction_get_mapped_range",
      "fdb_transaction_get_range",
      "fdb_transaction_get_range_split_points",
      "fdb_transaction_get_read_version",
      "fdb_transaction_get_versionstamp",
      "fdb_transaction_on_error",
      "fdb_transaction_read_blob_granules",
      "fdb_transaction_reset",
      "fdb_transaction_set",
      "fdb_transaction_set_option",
      "fdb_transaction_set_read_version",
      "fdb_transaction_summarize_blob_granules",
      "fdb_transaction_watch",
  };
  // The test links libfdb_c.so, so its exports are in the process's global scope.
  for (const char* name : names) EXPECT_NE(dlsym(RTLD_DEFAULT, name), nullptr) << name;
}

using Tenants = FdbTest;

// A default cluster's tenant mode is disabled: the tenant opens, and its transactions fail
// whatever reads or commits data with tenants_disabled, which no retry loop retries.
TEST_F(Tenants, ATenantsTransactionsFailEveryReadWatchAndCommitWithTenantsDisabled) {
  ASSERT_EQ(write(k("a"), "outside any tenant"), 0);
  Tenant tenant = open_tenant(db(), "acme");
  ASSERT_NE(tenant, nullptr);
  Tr tr = tenant_tr(tenant.get());
  ASSERT_NE(tr, nullptr);

  EXPECT_EQ(get(tr, k("a")).error, kTenantsDisabled);
  EXPECT_EQ(get_key(tr, first_greater_or_equal(k("a"))).error, kTenantsDisabled);
  EXPECT_EQ(get_range(tr, k(""), k("\xff")).error, kTenantsDisabled);
  Future watch(fdb_transaction_watch(tr.get(), u8(k("a")), len(k("a"))));
  EXPECT_EQ(wait(watch), kTenantsDisabled);
  Future size(fdb_transaction_get_estimated_range_size_bytes(tr.get(), u8(k("")), len(k("")),
                                                             u8(k("\xff")), len(k("\xff"))));
  EXPECT_EQ(wait(size), kTenantsDisabled);

  Future stamp(fdb_transaction_get_versionstamp(tr.get()));
  set(tr, k("b"), "in the tenant");
  EXPECT_EQ(commit(tr), kTenantsDisabled);
  EXPECT_EQ(wait(stamp), kTenantsDisabled);
  EXPECT_EQ(on_error(tr, kTenantsDisabled), kTenantsDisabled);
  EXPECT_FALSE(read(k("b")).present);
  EXPECT_EQ(read(k("a")).value, "outside any tenant");
}

// What reads nothing of the database works as in any transaction.
TEST_F(Tenants, ATenantsTransactionStillGivesItsReadVersionAndSize) {
  Tenant tenant = open_tenant(db(), "acme");
  Tr tr = tenant_tr(tenant.get());
  EXPECT_GT(read_version(tr), 0);
  set(tr, k("b"), "12345");
  Future size(fdb_transaction_get_approximate_size(tr.get()));
  ASSERT_EQ(wait(size), 0);
  EXPECT_GT(int64_of(size), 0);
}

// FoundationDB's bindings may drop the database before the tenants opened from it.
TEST_F(Tenants, ATenantOutlivesItsDatabaseHandleAndKeepsItsOptions) {
  Db handle = open_db();
  Tenant tenant = open_tenant(handle.get(), "acme");
  // Set after the tenant opened, before its transaction is made: it applies, as to every
  // transaction the handle makes from then on.
  ASSERT_EQ(set_db_option(handle.get(), FDB_DB_OPTION_TRANSACTION_RETRY_LIMIT, 0), 0);
  handle.reset();
  Tr tr = tenant_tr(tenant.get());
  ASSERT_NE(tr, nullptr);
  EXPECT_EQ(on_error(tr, 1020), 1020);  // retry limit 0: not retried
  Tr plain = tenant_tr(tenant.get());
  ASSERT_EQ(fdb_transaction_set_option(plain.get(), FDB_TR_OPTION_RETRY_LIMIT, u8(le64(-1)), 8), 0);
  EXPECT_EQ(on_error(plain, 1020), 0);  // no limit: retried after the backoff
}

TEST_F(Tenants, OpeningTakesAnyNameAndRefusesNoOutput) {
  Tenant empty = open_tenant(db(), "");
  EXPECT_NE(empty, nullptr);
  Tenant binary = open_tenant(db(), std::string("\xff\x00t", 3));
  EXPECT_NE(binary, nullptr);
  EXPECT_NE(tenant_tr(binary.get()), nullptr);
  EXPECT_EQ(fdb_database_open_tenant(db(), u8("x"), 1, nullptr), kClientInvalidOperation);
  EXPECT_EQ(fdb_tenant_create_transaction(empty.get(), nullptr), kClientInvalidOperation);
}

// Tenants are managed through the special key space's management module, as the bindings'
// tenant_management helpers do: the map reads empty, and creating or deleting a tenant
// fails the commit with tenants_disabled.
TEST_F(Tenants, TheTenantMapIsEmptyAndRefusesNewTenants) {
  const std::string map("\xff\xff/management/tenant/map/", 25);
  Tr tr = make_tr();
  const Range tenants = get_range(tr, map, map + "\xff");
  ASSERT_EQ(tenants.error, 0);
  EXPECT_TRUE(tenants.rows.empty());
  const Value acme = get(tr, map + "acme");
  ASSERT_EQ(acme.error, 0);
  EXPECT_FALSE(acme.present);

  ASSERT_EQ(set_option(tr, FDB_TR_OPTION_SPECIAL_KEY_SPACE_ENABLE_WRITES), 0);
  set(tr, map + "acme", "");
  EXPECT_EQ(commit(tr), kTenantsDisabled);

  Tr deleting = make_tr();
  ASSERT_EQ(set_option(deleting, FDB_TR_OPTION_SPECIAL_KEY_SPACE_ENABLE_WRITES), 0);
  clear(deleting, map + "acme");
  EXPECT_EQ(commit(deleting), kTenantsDisabled);

  // A clear of a range that begins before the map and covers it deletes every tenant.
  Tr clearing = make_tr();
  ASSERT_EQ(set_option(clearing, FDB_TR_OPTION_SPECIAL_KEY_SPACE_ENABLE_WRITES), 0);
  clear_range(clearing, std::string("\xff\xff/management/"), std::string("\xff\xff/management0"));
  EXPECT_EQ(commit(clearing), kTenantsDisabled);

  // Without the option, a write to special keys is refused as before.
  Tr plain = make_tr();
  set(plain, map + "acme", "");
  EXPECT_EQ(commit(plain), 2004);
}

using BlobGranules = FdbTest;

// No range is blobbified: the lists are empty and unblobbifying is already done; making a
// granule, or reading, verifying or purging one, is not supported.
TEST_F(BlobGranules, NothingIsBlobbifiedAndNothingCanBe) {
  const std::string b = k(""), e = k("\xff");
  Future list(fdb_database_list_blobbified_ranges(db(), u8(b), len(b), u8(e), len(e), 10));
  ASSERT_EQ(wait(list), 0);
  const FDBKeyRange* ranges = nullptr;
  int count = -1;
  ASSERT_EQ(fdb_future_get_keyrange_array(list.get(), &ranges, &count), 0);
  EXPECT_EQ(count, 0);

  Future unblobbify(fdb_database_unblobbify_range(db(), u8(b), len(b), u8(e), len(e)));
  ASSERT_EQ(wait(unblobbify), 0);
  fdb_bool_t done = 0;
  ASSERT_EQ(fdb_future_get_bool(unblobbify.get(), &done), 0);
  EXPECT_TRUE(done);

  Future blobbify(fdb_database_blobbify_range(db(), u8(b), len(b), u8(e), len(e)));
  EXPECT_EQ(wait(blobbify), kUnsupportedOperation);
  Future verify(fdb_database_verify_blob_range(db(), u8(b), len(b), u8(e), len(e), -2));
  EXPECT_EQ(wait(verify), kUnsupportedOperation);
  Future purge(fdb_database_purge_blob_granules(db(), u8(b), len(b), u8(e), len(e), 1, 0));
  EXPECT_EQ(wait(purge), kUnsupportedOperation);
  Future wait_purge(fdb_database_wait_purge_granules_complete(db(), u8(b), len(b)));
  EXPECT_EQ(wait(wait_purge), kUnsupportedOperation);
}

TEST_F(BlobGranules, ATransactionFindsNoGranuleAndCannotReadOne) {
  const std::string b = k(""), e = k("\xff");
  Tr tr = make_tr();
  Future ranges(
      fdb_transaction_get_blob_granule_ranges(tr.get(), u8(b), len(b), u8(e), len(e), 1000));
  ASSERT_EQ(wait(ranges), 0);
  const FDBKeyRange* out = nullptr;
  int count = -1;
  ASSERT_EQ(fdb_future_get_keyrange_array(ranges.get(), &out, &count), 0);
  EXPECT_EQ(count, 0);

  Future summaries(
      fdb_transaction_summarize_blob_granules(tr.get(), u8(b), len(b), u8(e), len(e), -2, 10));
  ASSERT_EQ(wait(summaries), 0);
  const FDBGranuleSummary* summary = nullptr;
  count = -1;
  ASSERT_EQ(fdb_future_get_granule_summary_array(summaries.get(), &summary, &count), 0);
  EXPECT_EQ(count, 0);

  FDBReadBlobGranuleContext context{};
  FDBResult* result =
      fdb_transaction_read_blob_granules(tr.get(), u8(b), len(b), u8(e), len(e), 0, -2, context);
  ASSERT_NE(result, nullptr);
  const FDBKeyValue* rows = nullptr;
  fdb_bool_t more = 0;
  EXPECT_EQ(fdb_result_get_keyvalue_array(result, &rows, &count, &more), kUnsupportedOperation);
  fdb_result_destroy(result);
}

TEST_F(BlobGranules, ATenantsGranuleCallsFailAsItsTransactionsDo) {
  const std::string b = "a", e = "b";
  Tenant tenant = open_tenant(db(), "acme");
  FDBTenant* t = tenant.get();
  std::vector<Future> calls;
  calls.emplace_back(fdb_tenant_blobbify_range(t, u8(b), len(b), u8(e), len(e)));
  calls.emplace_back(fdb_tenant_unblobbify_range(t, u8(b), len(b), u8(e), len(e)));
  calls.emplace_back(fdb_tenant_list_blobbified_ranges(t, u8(b), len(b), u8(e), len(e), 10));
  calls.emplace_back(fdb_tenant_verify_blob_range(t, u8(b), len(b), u8(e), len(e), -2));
  calls.emplace_back(fdb_tenant_purge_blob_granules(t, u8(b), len(b), u8(e), len(e), 1, 0));
  calls.emplace_back(fdb_tenant_wait_purge_granules_complete(t, u8(b), len(b)));
  for (const Future& f : calls) EXPECT_EQ(wait(f), kTenantsDisabled);
}

using MappedRanges = FdbTest;

TEST_F(MappedRanges, AreNotSupportedAndTheirGetterReadsOnlyTheirKind) {
  ASSERT_EQ(write(k("a"), "1"), 0);
  Tr tr = make_tr();
  const std::string b = k(""), e = k("\xff"), mapper = "mapper";
  Future mapped(fdb_transaction_get_mapped_range(tr.get(), u8(b), len(b), 0, 1, u8(e), len(e), 0, 1,
                                                 u8(mapper), len(mapper), 0, 0,
                                                 FDB_STREAMING_MODE_WANT_ALL, 0, 0, 0));
  EXPECT_EQ(wait(mapped), kUnsupportedOperation);
  const FDBMappedKeyValue* kv = nullptr;
  int count = -1;
  fdb_bool_t more = 0;
  EXPECT_EQ(fdb_future_get_mappedkeyvalue_array(mapped.get(), &kv, &count, &more),
            kUnsupportedOperation);

  // The new getters, like the old ones, refuse a future of another kind.
  Future value(fdb_transaction_get(tr.get(), u8(k("a")), len(k("a")), 0));
  ASSERT_EQ(wait(value), 0);
  EXPECT_EQ(fdb_future_get_mappedkeyvalue_array(value.get(), &kv, &count, &more),
            kClientInvalidOperation);
  const FDBKeyRange* ranges = nullptr;
  EXPECT_EQ(fdb_future_get_keyrange_array(value.get(), &ranges, &count), kClientInvalidOperation);
  const FDBGranuleSummary* summaries = nullptr;
  EXPECT_EQ(fdb_future_get_granule_summary_array(value.get(), &summaries, &count),
            kClientInvalidOperation);
}

using Administration = FdbTest;

TEST_F(Administration, OneProcessHasNoWorkerToRebootNorRecoveryOrSnapshotToMake) {
  const std::string address = "127.0.0.1:4500";
  Future reboot(fdb_database_reboot_worker(db(), u8(address), len(address), 0, 0));
  ASSERT_EQ(wait(reboot), 0);
  EXPECT_EQ(int64_of(reboot), 0);
  Future recovery(fdb_database_force_recovery_with_data_loss(db(), u8("dc"), 2));
  EXPECT_EQ(wait(recovery), kUnsupportedOperation);
  Future snapshot(fdb_database_create_snapshot(db(), u8("uid"), 3, u8("cmd"), 3));
  EXPECT_EQ(wait(snapshot), kUnsupportedOperation);
}

// The protocol is FoundationDB 7.4's (the newest API the library offers, 740); asked to
// wait for a change from it, the future waits until cancelled, as FoundationDB's does
// while the cluster keeps its protocol.
TEST_F(Administration, TheServerProtocolIsSevenFoursAndNeverChanges) {
  Future protocol(fdb_database_get_server_protocol(db(), 0));
  ASSERT_EQ(wait(protocol), 0);
  uint64_t v = 0;
  ASSERT_EQ(fdb_future_get_uint64(protocol.get(), &v), 0);
  EXPECT_EQ(v, kProtocol74);

  Future other(fdb_database_get_server_protocol(db(), kProtocol74 - 1));
  ASSERT_EQ(wait(other), 0);
  ASSERT_EQ(fdb_future_get_uint64(other.get(), &v), 0);
  EXPECT_EQ(v, kProtocol74);

  Future change(fdb_database_get_server_protocol(db(), kProtocol74));
  EXPECT_FALSE(fdb_future_is_ready(change.get()));
  fdb_future_cancel(change.get());
  EXPECT_EQ(wait(change), kOperationCancelled);
}

}  // namespace
}  // namespace fdbc_test
