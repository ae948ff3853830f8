// Blob granules and mapped ranges: FoundationDB features that need parts of a cluster
// strata has no counterpart for (blob workers and their files; storage servers that run
// a mapper). strata answers as a cluster with no blob granules configured: nothing is
// blobbified, so the lists are empty and unblobbifying succeeds; whatever would need a
// granule (or a granule file: the readbg parsers) fails with unsupported_operation
// (docs/decisions/0018, 0021).
#include "fdb_c/bytes.hpp"
#include "fdb_c/database.hpp"
#include "fdb_c/error_codes.hpp"
#include "fdb_c/fdb_c.h"
#include "fdb_c/future.hpp"
#include "fdb_c/transaction.hpp"

// A result computed at once; strata's only ever carries an error.
struct FDB_result {
  fdb_error_t error;
};

namespace fc = strata::fdb_c;

namespace {

// Every result strata makes is this one failure: shared, never freed (so a call that
// makes one allocates nothing and cannot fail), and const, in read-only memory. The C API
// hands out a non-const FDBResult*, through which nothing writes: fdb_result_destroy does
// nothing and the getters only read.
const FDB_result kUnsupportedResult{fc::kUnsupportedOperation};

FDBResult* unsupported_result() { return const_cast<FDB_result*>(&kUnsupportedResult); }

using Kind = FDB_future::Kind;

FDBFuture* empty(Kind kind) { return FDB_future::ready(kind); }

FDBFuture* unsupported() { return FDB_future::failed(fc::kUnsupportedOperation); }

FDBFuture* yes() {
  FDB_future::Result result{Kind::int64};
  result.int64 = 1;
  return FDB_future::ready(std::move(result));
}

// A tenant's operations fail as its transactions do.
FDBFuture* tenants_disabled() { return FDB_future::failed(fc::kTenantsDisabled); }

bool inverted(const uint8_t* begin, int begin_length, const uint8_t* end, int end_length) {
  return fc::bytes(begin, begin_length) > fc::bytes(end, end_length);
}

}  // namespace

// A database handle's operations fail first with its deferred error
// (DatabaseState::deferred_error), as FoundationDB's ThreadSafeDatabase checks its
// context's (checkDeferredError) before each.
extern "C" {

FDBFuture* fdb_database_blobbify_range(FDBDatabase* d, const uint8_t* /*begin_key_name*/,
                                       int /*begin_key_name_length*/,
                                       const uint8_t* /*end_key_name*/,
                                       int /*end_key_name_length*/) {
  if (const fdb_error_t e = d->state->deferred_error(); e != 0) return FDB_future::failed(e);
  return unsupported();
}

FDBFuture* fdb_database_blobbify_range_blocking(FDBDatabase* d, const uint8_t* /*begin_key_name*/,
                                                int /*begin_key_name_length*/,
                                                const uint8_t* /*end_key_name*/,
                                                int /*end_key_name_length*/) {
  if (const fdb_error_t e = d->state->deferred_error(); e != 0) return FDB_future::failed(e);
  return unsupported();
}

FDBFuture* fdb_database_flush_blob_range(FDBDatabase* d, const uint8_t* /*begin_key_name*/,
                                         int /*begin_key_name_length*/,
                                         const uint8_t* /*end_key_name*/,
                                         int /*end_key_name_length*/, fdb_bool_t /*compact*/,
                                         int64_t /*version*/) {
  if (const fdb_error_t e = d->state->deferred_error(); e != 0) return FDB_future::failed(e);
  return unsupported();
}

FDBFuture* fdb_database_unblobbify_range(FDBDatabase* d, const uint8_t* /*begin_key_name*/,
                                         int /*begin_key_name_length*/,
                                         const uint8_t* /*end_key_name*/,
                                         int /*end_key_name_length*/) {
  if (const fdb_error_t e = d->state->deferred_error(); e != 0) return FDB_future::failed(e);
  return yes();  // as FoundationDB for a range with no blob granule: already done
}

FDBFuture* fdb_database_list_blobbified_ranges(FDBDatabase* d, const uint8_t* /*begin_key_name*/,
                                               int /*begin_key_name_length*/,
                                               const uint8_t* /*end_key_name*/,
                                               int /*end_key_name_length*/, int /*range_limit*/) {
  if (const fdb_error_t e = d->state->deferred_error(); e != 0) return FDB_future::failed(e);
  return empty(Kind::key_ranges);
}

FDBFuture* fdb_database_verify_blob_range(FDBDatabase* d, const uint8_t* /*begin_key_name*/,
                                          int /*begin_key_name_length*/,
                                          const uint8_t* /*end_key_name*/,
                                          int /*end_key_name_length*/, int64_t /*version*/) {
  if (const fdb_error_t e = d->state->deferred_error(); e != 0) return FDB_future::failed(e);
  return unsupported();
}

FDBFuture* fdb_database_purge_blob_granules(FDBDatabase* d, const uint8_t* /*begin_key_name*/,
                                            int /*begin_key_name_length*/,
                                            const uint8_t* /*end_key_name*/,
                                            int /*end_key_name_length*/, int64_t /*purge_version*/,
                                            fdb_bool_t /*force*/) {
  if (const fdb_error_t e = d->state->deferred_error(); e != 0) return FDB_future::failed(e);
  return unsupported();
}

FDBFuture* fdb_database_wait_purge_granules_complete(FDBDatabase* d,
                                                     const uint8_t* /*purge_key_name*/,
                                                     int /*purge_key_name_length*/) {
  if (const fdb_error_t e = d->state->deferred_error(); e != 0) return FDB_future::failed(e);
  return unsupported();
}

FDBFuture* fdb_tenant_blobbify_range(FDBTenant* /*tenant*/, const uint8_t* /*begin_key_name*/,
                                     int /*begin_key_name_length*/, const uint8_t* /*end_key_name*/,
                                     int /*end_key_name_length*/) {
  return tenants_disabled();
}

FDBFuture* fdb_tenant_blobbify_range_blocking(FDBTenant* /*tenant*/,
                                              const uint8_t* /*begin_key_name*/,
                                              int /*begin_key_name_length*/,
                                              const uint8_t* /*end_key_name*/,
                                              int /*end_key_name_length*/) {
  return tenants_disabled();
}

FDBFuture* fdb_tenant_flush_blob_range(FDBTenant* /*tenant*/, const uint8_t* /*begin_key_name*/,
                                       int /*begin_key_name_length*/,
                                       const uint8_t* /*end_key_name*/, int /*end_key_name_length*/,
                                       fdb_bool_t /*compact*/, int64_t /*version*/) {
  return tenants_disabled();
}

FDBFuture* fdb_tenant_unblobbify_range(FDBTenant* /*tenant*/, const uint8_t* /*begin_key_name*/,
                                       int /*begin_key_name_length*/,
                                       const uint8_t* /*end_key_name*/,
                                       int /*end_key_name_length*/) {
  return tenants_disabled();
}

FDBFuture* fdb_tenant_list_blobbified_ranges(FDBTenant* /*tenant*/,
                                             const uint8_t* /*begin_key_name*/,
                                             int /*begin_key_name_length*/,
                                             const uint8_t* /*end_key_name*/,
                                             int /*end_key_name_length*/, int /*range_limit*/) {
  return tenants_disabled();
}

FDBFuture* fdb_tenant_verify_blob_range(FDBTenant* /*tenant*/, const uint8_t* /*begin_key_name*/,
                                        int /*begin_key_name_length*/,
                                        const uint8_t* /*end_key_name*/,
                                        int /*end_key_name_length*/, int64_t /*version*/) {
  return tenants_disabled();
}

FDBFuture* fdb_tenant_purge_blob_granules(FDBTenant* /*tenant*/, const uint8_t* /*begin_key_name*/,
                                          int /*begin_key_name_length*/,
                                          const uint8_t* /*end_key_name*/,
                                          int /*end_key_name_length*/, int64_t /*purge_version*/,
                                          fdb_bool_t /*force*/) {
  return tenants_disabled();
}

FDBFuture* fdb_tenant_wait_purge_granules_complete(FDBTenant* /*tenant*/,
                                                   const uint8_t* /*purge_key_name*/,
                                                   int /*purge_key_name_length*/) {
  return tenants_disabled();
}

// The transaction's calls go through its read(): a deferred error, a timeout or a tenant's
// unavailability comes first, as for any read; only an inverted range comes before them
// (FoundationDB builds the range first).

FDBFuture* fdb_transaction_get_blob_granule_ranges(FDBTransaction* tr,
                                                   const uint8_t* begin_key_name,
                                                   int begin_key_name_length,
                                                   const uint8_t* end_key_name,
                                                   int end_key_name_length, int /*range_limit*/) {
  if (inverted(begin_key_name, begin_key_name_length, end_key_name, end_key_name_length)) {
    return FDB_future::failed(fc::kInvertedRange);
  }
  return tr->read([](FDB_future::Result& r) { r.kind = Kind::key_ranges; });
}

FDBFuture* fdb_transaction_summarize_blob_granules(
    FDBTransaction* tr, const uint8_t* begin_key_name, int begin_key_name_length,
    const uint8_t* end_key_name, int end_key_name_length, int64_t /*summary_version*/,
    int /*range_limit*/) {
  if (inverted(begin_key_name, begin_key_name_length, end_key_name, end_key_name_length)) {
    return FDB_future::failed(fc::kInvertedRange);
  }
  return tr->read([](FDB_future::Result& r) { r.kind = Kind::granule_summaries; });
}

FDBResult* fdb_transaction_read_blob_granules(
    FDBTransaction* /*tr*/, const uint8_t* /*begin_key_name*/, int /*begin_key_name_length*/,
    const uint8_t* /*end_key_name*/, int /*end_key_name_length*/, int64_t /*begin_version*/,
    int64_t /*read_version*/, FDBReadBlobGranuleContext /*granule_context*/) {
  return unsupported_result();
}

FDBFuture* fdb_transaction_read_blob_granules_description(
    FDBTransaction* tr, const uint8_t* /*begin_key_name*/, int /*begin_key_name_length*/,
    const uint8_t* /*end_key_name*/, int /*end_key_name_length*/, int64_t /*begin_version*/,
    int64_t /*read_version*/, int64_t* /*read_version_out*/) {
  return tr->read([](FDB_future::Result&) { throw fc::CApiError{fc::kUnsupportedOperation}; });
}

FDBFuture* fdb_transaction_get_mapped_range(
    FDBTransaction* tr, const uint8_t* /*begin_key_name*/, int /*begin_key_name_length*/,
    fdb_bool_t /*begin_or_equal*/, int /*begin_offset*/, const uint8_t* /*end_key_name*/,
    int /*end_key_name_length*/, fdb_bool_t /*end_or_equal*/, int /*end_offset*/,
    const uint8_t* /*mapper_name*/, int /*mapper_name_length*/, int /*limit*/, int /*target_bytes*/,
    FDBStreamingMode /*mode*/, int /*iteration*/, fdb_bool_t /*snapshot*/, fdb_bool_t /*reverse*/) {
  return tr->read([](FDB_future::Result&) { throw fc::CApiError{fc::kUnsupportedOperation}; });
}

// Granule files are FoundationDB's own format, written by its blob workers; strata has
// none to parse.
FDBResult* fdb_readbg_parse_snapshot_file(const uint8_t* /*file_data*/, int /*file_len*/,
                                          const FDBBGTenantPrefix* /*tenant_prefix*/,
                                          const FDBBGEncryptionCtx* /*encryption_ctx*/) {
  return unsupported_result();
}

FDBResult* fdb_readbg_parse_delta_file(const uint8_t* /*file_data*/, int /*file_len*/,
                                       const FDBBGTenantPrefix* /*tenant_prefix*/,
                                       const FDBBGEncryptionCtx* /*encryption_ctx*/) {
  return unsupported_result();
}

void fdb_result_destroy(FDBResult* /*r*/) {}  // kUnsupportedResult, never freed

fdb_error_t fdb_result_get_keyvalue_array(FDBResult* r, const FDBKeyValue** /*out_kv*/,
                                          int* /*out_count*/, fdb_bool_t* /*out_more*/) {
  return r->error;  // never 0: strata's results are errors
}

fdb_error_t fdb_result_get_bg_mutations_array(FDBResult* r, const FDBBGMutation** /*out_mutations*/,
                                              int* /*out_count*/) {
  return r->error;
}

}  // extern "C"
