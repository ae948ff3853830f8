// What FoundationDB 7.3 added to the C API (API 730; 7.4's 740 adds nothing to it), as strata
// answers it (docs/decisions/0021): a transaction's tag-throttling cost and throttled time,
// the client status document, a tenant's id, and more blob granule calls. FoundationDB's
// 7.3 and 7.4 Python bindings resolve fdb_database_get_client_status and fdb_tenant_get_id
// when they load.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "fdb_c/fdb_c.h"
#include "fdb_c_test_util.hpp"
#include <dlfcn.h>

namespace fdbc_test {
namespace {

constexpr fdb_error_t kClientInvalidOperation = 2000;
constexpr fdb_error_t kUnsupportedOperation = 2108;
constexpr fdb_error_t kTenantsDisabled = 2136;
constexpr int64_t kPage = 4096;            // FoundationDB's TAG_THROTTLING_PAGE_SIZE
constexpr int64_t kWritePage = 4 * kPage;  // ... times GLOBAL_TAG_THROTTLING_RW_FUNGIBILITY_RATIO

TEST(SevenThreeApi, EveryFunctionItAddedIsExported) {
  const std::vector<const char*> names = {
      "fdb_database_blobbify_range_blocking",
      "fdb_database_flush_blob_range",
      "fdb_database_get_client_status",
      "fdb_future_get_double",
      "fdb_future_readbg_get_descriptions",
      "fdb_readbg_parse_delta_file",
      "fdb_readbg_parse_snapshot_file",
      "fdb_result_get_bg_mutations_array",
      "fdb_tenant_blobbify_range_blocking",
      "fdb_tenant_flush_blob_range",
      "fdb_tenant_get_id",
      "fdb_transaction_get_tag_throttled_duration",
      "fdb_transaction_get_total_cost",
      "fdb_transaction_read_blob_granules_description",
  };
  for (const char* name : names) EXPECT_NE(dlsym(RTLD_DEFAULT, name), nullptr) << name;
}

int64_t total_cost(const Tr& tr) {
  Future f(fdb_transaction_get_total_cost(tr.get()));
  EXPECT_EQ(wait(f), 0);
  int64_t v = -1;
  EXPECT_EQ(fdb_future_get_int64(f.get(), &v), 0);
  return v;
}

using TotalCost = FdbTest;

// A read costs its key and value bytes rounded up to 4 KiB pages, at least one page; a
// range read costs its rows' bytes so rounded, an empty one a page.
TEST_F(TotalCost, ReadsCountWholePagesAsTheyComplete) {
  ASSERT_EQ(write(k("small"), "v"), 0);
  ASSERT_EQ(write(k("big"), std::string(5000, 'b')), 0);
  Tr tr = make_tr();
  EXPECT_EQ(total_cost(tr), 0);
  EXPECT_TRUE(get(tr, k("small")).present);
  EXPECT_EQ(total_cost(tr), kPage);
  EXPECT_FALSE(get(tr, k("missing")).present);
  EXPECT_EQ(total_cost(tr), 2 * kPage);
  EXPECT_TRUE(get(tr, k("big"), /*snapshot=*/true).present);  // snapshot reads count too
  EXPECT_EQ(total_cost(tr), 4 * kPage);

  Range rows = get_range(tr, k(""), prefix_end());
  ASSERT_EQ(rows.error, 0);
  ASSERT_EQ(rows.rows.size(), 2u);  // ~5,060 bytes: two pages
  EXPECT_EQ(total_cost(tr), 6 * kPage);
  Range none = get_range(tr, k("x"), k("y"));
  ASSERT_EQ(none.error, 0);
  EXPECT_TRUE(none.rows.empty());
  EXPECT_EQ(total_cost(tr), 7 * kPage);
}

// Writes count once commit is called, as FoundationDB's client adds them to the request
// then: a set or atomic operation four times its pages, a clear one page.
TEST_F(TotalCost, WritesCountOnceCommitIsCalled) {
  Tr tr = make_tr();
  set(tr, k("a"), "1");
  set(tr, k("b"), std::string(10000, 'x'));  // three pages
  atomic(tr, k("n"), le64(1), FDB_MUTATION_TYPE_ADD);
  clear(tr, k("c"));
  clear_range(tr, k("d"), k("e"));
  EXPECT_EQ(total_cost(tr), 0);
  ASSERT_EQ(commit(tr), 0);
  EXPECT_EQ(total_cost(tr), kWritePage + 3 * kWritePage + kWritePage + 2 * kPage);
}

// A clear counts only when it clears something. FoundationDB's client adds a clear's page
// as it puts the clear into the commit request, after cutting its ends to the longest key
// and dropping a range left empty (fdbclient/NativeAPI.actor.cpp: Transaction::clear,
// TransactionState::addClearCost, getMaxClearKeySize); its read-your-writes layer drops a
// key longer than that before (fdbclient/ReadYourWrites.actor.cpp:
// ReadYourWritesTransaction::clear). The longest key is 10,008 bytes (getMaxKeySize).
TEST_F(TotalCost, AClearThatClearsNothingCostsNothing) {
  const auto key_of_size = [&](std::size_t size, char last = 'k') {
    return k(std::string(size - prefix().size() - 1, 'k') + last);
  };
  Tr nothing = make_tr();
  clear(nothing, key_of_size(10'009));   // longer than any key
  clear_range(nothing, k("b"), k("b"));  // empty
  // Ends alike in their first 10,009 bytes: empty once cut.
  clear_range(nothing, key_of_size(10'009) + "a", key_of_size(10'009) + "b");
  set(nothing, k("a"), "1");
  ASSERT_EQ(commit(nothing), 0);
  EXPECT_EQ(total_cost(nothing), kWritePage);  // the set alone

  Tr counted = make_tr();
  clear(counted, key_of_size(10'008));  // as long as a key may be: cleared
  clear_range(counted, key_of_size(10'009, 'a') + "x", key_of_size(10'009, 'b'));
  ASSERT_EQ(commit(counted), 0);
  EXPECT_EQ(total_cost(counted), 2 * kPage);
}

// A get of a key longer than any key is answered absent without a read, and costs nothing:
// FoundationDB's client returns before the storage read whose reply it counts
// (fdbclient/ReadYourWrites.actor.cpp: ReadYourWritesTransaction::get;
// fdbclient/NativeAPI.actor.cpp: Transaction::get, getValue). A key of up to 10,008 bytes
// is read and counted.
TEST_F(TotalCost, AGetOfAKeyLongerThanAnyKeyCostsNothing) {
  const std::string too_long = k(std::string(10'009 - prefix().size(), 'k'));
  const std::string longest = k(std::string(10'008 - prefix().size(), 'k'));
  Tr tr = make_tr();
  EXPECT_FALSE(get(tr, too_long).present);
  EXPECT_FALSE(get(tr, too_long, /*snapshot=*/true).present);
  EXPECT_EQ(total_cost(tr), 0);
  EXPECT_FALSE(get(tr, longest).present);
  EXPECT_EQ(total_cost(tr), 3 * kPage);  // its 10,008 bytes
}

TEST_F(TotalCost, StartsAgainOnResetAndOnError) {
  Tr tr = make_tr();
  EXPECT_FALSE(get(tr, k("a")).present);
  set(tr, k("a"), "1");
  ASSERT_EQ(commit(tr), 0);
  EXPECT_EQ(total_cost(tr), kPage + kWritePage);
  fdb_transaction_reset(tr.get());
  EXPECT_EQ(total_cost(tr), 0);

  EXPECT_TRUE(get(tr, k("a")).present);
  EXPECT_EQ(total_cost(tr), kPage);
  ASSERT_EQ(on_error(tr, 1020), 0);  // not_committed: retried as a fresh transaction
  EXPECT_EQ(total_cost(tr), 0);
}

using TagThrottling = FdbTest;

// One process has no proxies to throttle at: a transaction is never delayed. The double
// future's getter reads only its kind, and the other getters refuse it.
TEST_F(TagThrottling, NoTransactionIsEverThrottled) {
  Tr tr = make_tr();
  ASSERT_EQ(write(k("a"), "1"), 0);
  EXPECT_TRUE(get(tr, k("a")).present);
  Future f(fdb_transaction_get_tag_throttled_duration(tr.get()));
  ASSERT_EQ(wait(f), 0);
  double seconds = -1;
  ASSERT_EQ(fdb_future_get_double(f.get(), &seconds), 0);
  EXPECT_EQ(seconds, 0.0);
  int64_t n = 0;
  EXPECT_EQ(fdb_future_get_int64(f.get(), &n), kClientInvalidOperation);

  Future size(fdb_transaction_get_approximate_size(tr.get()));
  ASSERT_EQ(wait(size), 0);
  EXPECT_EQ(fdb_future_get_double(size.get(), &seconds), kClientInvalidOperation);
}

// FoundationDB's client status document: a JSON object with its health, the protocol and
// the connection record the handle was made from (escaped).
TEST(ClientStatus, IsAHealthyJsonDocumentNamingItsConnection) {
  const std::string connection = "desc:\"id\\1\"@127.0.0.1:4500";  // not strata's: in memory
  FDBDatabase* d = nullptr;
  ASSERT_EQ(fdb_create_database_from_connection_string(connection.c_str(), &d), 0);
  Db handle(d);
  Future f(fdb_database_get_client_status(d));
  ASSERT_EQ(wait(f), 0);
  const Key status = key_of(f.get());
  ASSERT_EQ(status.error, 0);
  const std::string& json = status.key;
  ASSERT_FALSE(json.empty());
  EXPECT_EQ(json.front(), '{');
  EXPECT_EQ(json.back(), '}');
  EXPECT_NE(json.find(R"("Healthy":true)"), std::string::npos) << json;
  EXPECT_NE(json.find(R"("InitializationState":"created")"), std::string::npos) << json;
  EXPECT_NE(json.find(R"("ProtocolVersion":"fdb00b074000000")"), std::string::npos) << json;
  EXPECT_NE(json.find(R"("ConnectionRecord":"connection string: desc:\"id\\1\"@127.0.0.1:4500")"),
            std::string::npos)
      << json;

  Future default_status(fdb_database_get_client_status(db()));
  ASSERT_EQ(wait(default_status), 0);
  EXPECT_NE(key_of(default_status.get()).key.find(R"("ConnectionRecord":"default file")"),
            std::string::npos);
}

// As a cluster without tenants: the commit proxy finds no such name in its tenant map and
// answers tenant_not_found (FoundationDB 7.4.6, CommitProxyServer's doTenantIdRequest).
TEST(TenantId, IsTenantNotFound) {
  FDBTenant* t = nullptr;
  ASSERT_EQ(fdb_database_open_tenant(db(), u8("acme"), 4, &t), 0);
  Future id(fdb_tenant_get_id(t));
  EXPECT_EQ(wait(id), 2131);
  fdb_tenant_destroy(t);
}

using MoreBlobGranules = FdbTest;

TEST_F(MoreBlobGranules, NoneCanBeMadeFlushedDescribedOrParsed) {
  const std::string b = k(""), e = k("\xff");
  Future blobbify(fdb_database_blobbify_range_blocking(db(), u8(b), len(b), u8(e), len(e)));
  EXPECT_EQ(wait(blobbify), kUnsupportedOperation);
  Future flush(fdb_database_flush_blob_range(db(), u8(b), len(b), u8(e), len(e), 1, -2));
  EXPECT_EQ(wait(flush), kUnsupportedOperation);

  Tr tr = make_tr();
  int64_t read_version = -7;
  Future described(fdb_transaction_read_blob_granules_description(tr.get(), u8(b), len(b), u8(e),
                                                                  len(e), 0, -2, &read_version));
  EXPECT_EQ(wait(described), kUnsupportedOperation);
  FDBBGFileDescription* descriptions = nullptr;
  int count = -1;
  EXPECT_EQ(fdb_future_readbg_get_descriptions(described.get(), &descriptions, &count),
            kUnsupportedOperation);
  EXPECT_EQ(read_version, -7);  // not written: no read happened
  // Its getter, like the others, refuses a future of another kind.
  Future value(fdb_transaction_get(tr.get(), u8(k("a")), len(k("a")), 0));
  ASSERT_EQ(wait(value), 0);
  EXPECT_EQ(fdb_future_readbg_get_descriptions(value.get(), &descriptions, &count),
            kClientInvalidOperation);

  const std::string file = "not a granule file";
  for (FDBResult* parsed : {fdb_readbg_parse_snapshot_file(u8(file), len(file), nullptr, nullptr),
                            fdb_readbg_parse_delta_file(u8(file), len(file), nullptr, nullptr)}) {
    ASSERT_NE(parsed, nullptr);
    const FDBBGMutation* mutations = nullptr;
    EXPECT_EQ(fdb_result_get_bg_mutations_array(parsed, &mutations, &count), kUnsupportedOperation);
    fdb_result_destroy(parsed);
  }
}

TEST(MoreTenantBlobGranules, FailAsTheTenantsTransactionsDo) {
  FDBTenant* t = nullptr;
  ASSERT_EQ(fdb_database_open_tenant(db(), u8("acme"), 4, &t), 0);
  Future blobbify(fdb_tenant_blobbify_range_blocking(t, u8("a"), 1, u8("b"), 1));
  EXPECT_EQ(wait(blobbify), kTenantsDisabled);
  Future flush(fdb_tenant_flush_blob_range(t, u8("a"), 1, u8("b"), 1, 0, -2));
  EXPECT_EQ(wait(flush), kTenantsDisabled);
  fdb_tenant_destroy(t);
}

}  // namespace
}  // namespace fdbc_test
