/* fdb_c/fdb_c.h: strata's declarations of FoundationDB's C API (the 7.4 ABI, API 740).
 *
 * libfdb_c.so exports these functions over an in-process strata database, so a program
 * (or a binding) built against FoundationDB's own fdb_c.h runs unchanged. These
 * declarations are written from FoundationDB's C API reference; they match its ABI:
 *   - fdb_error_t and fdb_bool_t are int;
 *   - FDBKey (12 bytes) and FDBKeyValue (24 bytes) are packed to 4-byte alignment;
 *   - integer options arrive as 8-byte little-endian values.
 * What is supported and what is approximate: docs/fdb_c.md.
 *
 * Thread safety: as FoundationDB's client. Every function may be called from any thread;
 * one transaction may be used from several threads at once (calls are serialized).
 * Ownership: every FDBFuture* returned must be released with fdb_future_destroy; memory
 * returned by fdb_future_get_* stays valid until then.
 */
#ifndef STRATA_FDB_C_H
#define STRATA_FDB_C_H

#include <stdint.h>

/* The library is built with hidden visibility; these names are its interface. */
#pragma GCC visibility push(default)

/* FoundationDB's own names and C idioms (typedef, 0 for null): clang-tidy leaves them be. */
/* NOLINTBEGIN */
#ifdef __cplusplus
extern "C" {
#endif

#define STRATA_FDB_API_VERSION 740

typedef int fdb_error_t;
typedef int fdb_bool_t;

typedef struct FDB_future FDBFuture;
typedef struct FDB_database FDBDatabase;
typedef struct FDB_transaction FDBTransaction;
typedef struct FDB_tenant FDBTenant;
typedef struct FDB_result FDBResult;

typedef int FDBNetworkOption;
typedef int FDBDatabaseOption;
typedef int FDBTransactionOption;
typedef int FDBStreamingMode;
typedef int FDBMutationType;
typedef int FDBConflictRangeType;
typedef int FDBErrorPredicate;
typedef void (*FDBCallback)(FDBFuture* future, void* callback_parameter);

#pragma pack(push, 4)
typedef struct key {
  const uint8_t* key;
  int key_length;
} FDBKey;

typedef struct keyvalue {
  const uint8_t* key;
  int key_length;
  const uint8_t* value;
  int value_length;
} FDBKeyValue;
#pragma pack(pop)

/* The shapes of FoundationDB's later additions (mapped ranges, blob granules). strata
   produces none of them (docs/fdb_c.md, "Tenants, blob granules, administration"), but
   their getters and entry points take them, so their layouts are FoundationDB's. */
typedef struct keyselector {
  FDBKey key;
  fdb_bool_t orEqual;
  int offset;
} FDBKeySelector;

typedef struct getrangereqandresult {
  FDBKeySelector begin;
  FDBKeySelector end;
  FDBKeyValue* data;
  int m_size, m_capacity;
} FDBGetRangeReqAndResult;

typedef struct mappedkeyvalue {
  FDBKey key;
  FDBKey value;
  FDBGetRangeReqAndResult getRange;
  unsigned char buffer[32];
} FDBMappedKeyValue;

#pragma pack(push, 4)
typedef struct keyrange {
  const uint8_t* begin_key;
  int begin_key_length;
  const uint8_t* end_key;
  int end_key_length;
} FDBKeyRange;

typedef struct granulesummary {
  FDBKeyRange key_range;
  int64_t snapshot_version;
  int64_t snapshot_size;
  int64_t delta_version;
  int64_t delta_size;
} FDBGranuleSummary;
#pragma pack(pop)

typedef struct readgranulecontext {
  void* userContext;
  int64_t (*start_load_f)(const char* filename, int filenameLength, int64_t offset, int64_t length,
                          int64_t fullFileLength, void* context);
  uint8_t* (*get_load_f)(int64_t loadId, void* context);
  void (*free_load_f)(int64_t loadId, void* context);
  fdb_bool_t debugNoMaterialize;
  int granuleParallelism;
} FDBReadBlobGranuleContext;

/* Granule file descriptions (7.3 on: fdb_transaction_read_blob_granules_description and the
   readbg parsers). */
typedef enum {
  FDB_BG_MUTATION_TYPE_SET_VALUE = 0,
  FDB_BG_MUTATION_TYPE_CLEAR_RANGE = 1
} FDBBGMutationType;

#pragma pack(push, 4)
typedef struct bgtenantprefix {
  fdb_bool_t present;
  FDBKey prefix;
} FDBBGTenantPrefix;

typedef struct bgencryptionkey {
  int64_t domain_id;
  uint64_t base_key_id;
  uint32_t base_kcv;
  uint64_t random_salt;
  FDBKey base_key;
} FDBBGEncryptionKey;

typedef struct bgencryptionctx {
  fdb_bool_t present;
  FDBBGEncryptionKey textKey;
  uint32_t textKCV;
  FDBBGEncryptionKey headerKey;
  uint32_t headerKCV;
  FDBKey iv;
} FDBBGEncryptionCtx;

typedef struct bgfilepointer {
  const uint8_t* filename_ptr;
  int filename_length;
  int64_t file_offset;
  int64_t file_length;
  int64_t full_file_length;
  int64_t file_version;
  FDBBGEncryptionCtx encryption_ctx;
} FDBBGFilePointer;

typedef struct bgmutation {
  uint8_t type; /* FDBBGMutationType */
  int64_t version;
  const uint8_t* param1_ptr;
  int param1_length;
  const uint8_t* param2_ptr;
  int param2_length;
} FDBBGMutation;

typedef struct bgfiledescription {
  FDBKeyRange key_range;
  fdb_bool_t snapshot_present;
  FDBBGFilePointer snapshot_file_pointer;
  int delta_file_count;
  FDBBGFilePointer* delta_files;
  int memory_mutation_count;
  FDBBGMutation* memory_mutations;
  FDBBGTenantPrefix tenant_prefix;
} FDBBGFileDescription;
#pragma pack(pop)

/* Streaming modes for fdb_transaction_get_range. */
enum {
  FDB_STREAMING_MODE_WANT_ALL = -2,
  FDB_STREAMING_MODE_ITERATOR = -1,
  FDB_STREAMING_MODE_EXACT = 0,
  FDB_STREAMING_MODE_SMALL = 1,
  FDB_STREAMING_MODE_MEDIUM = 2,
  FDB_STREAMING_MODE_LARGE = 3,
  FDB_STREAMING_MODE_SERIAL = 4
};

/* Atomic operation codes for fdb_transaction_atomic_op. */
enum {
  FDB_MUTATION_TYPE_ADD = 2,
  FDB_MUTATION_TYPE_AND = 6,
  FDB_MUTATION_TYPE_BIT_AND = 6,
  FDB_MUTATION_TYPE_OR = 7,
  FDB_MUTATION_TYPE_BIT_OR = 7,
  FDB_MUTATION_TYPE_XOR = 8,
  FDB_MUTATION_TYPE_BIT_XOR = 8,
  FDB_MUTATION_TYPE_APPEND_IF_FITS = 9,
  FDB_MUTATION_TYPE_MAX = 12,
  FDB_MUTATION_TYPE_MIN = 13,
  FDB_MUTATION_TYPE_SET_VERSIONSTAMPED_KEY = 14,
  FDB_MUTATION_TYPE_SET_VERSIONSTAMPED_VALUE = 15,
  FDB_MUTATION_TYPE_BYTE_MIN = 16,
  FDB_MUTATION_TYPE_BYTE_MAX = 17,
  FDB_MUTATION_TYPE_COMPARE_AND_CLEAR = 20
};

enum { FDB_CONFLICT_RANGE_TYPE_READ = 0, FDB_CONFLICT_RANGE_TYPE_WRITE = 1 };

enum {
  FDB_ERROR_PREDICATE_RETRYABLE = 50000,
  FDB_ERROR_PREDICATE_MAYBE_COMMITTED = 50001,
  FDB_ERROR_PREDICATE_RETRYABLE_NOT_COMMITTED = 50002
};

/* The options strata acts on (docs/fdb_c.md); every other code FoundationDB 7.4 defines
   is accepted and ignored, and a code it does not define fails with invalid_option
   (2007). */
enum {
  FDB_DB_OPTION_MAX_WATCHES = 20,
  FDB_DB_OPTION_SNAPSHOT_RYW_ENABLE = 26,
  FDB_DB_OPTION_SNAPSHOT_RYW_DISABLE = 27,
  FDB_DB_OPTION_TRANSACTION_TIMEOUT = 500,
  FDB_DB_OPTION_TRANSACTION_RETRY_LIMIT = 501,
  FDB_DB_OPTION_TRANSACTION_MAX_RETRY_DELAY = 502,
  FDB_DB_OPTION_TRANSACTION_SIZE_LIMIT = 503,
  FDB_DB_OPTION_TRANSACTION_REPORT_CONFLICTING_KEYS = 702
};

enum {
  FDB_TR_OPTION_NEXT_WRITE_NO_WRITE_CONFLICT_RANGE = 30,
  FDB_TR_OPTION_READ_YOUR_WRITES_DISABLE = 51,
  FDB_TR_OPTION_ACCESS_SYSTEM_KEYS = 301,
  FDB_TR_OPTION_READ_SYSTEM_KEYS = 302,
  FDB_TR_OPTION_TIMEOUT = 500,
  FDB_TR_OPTION_RETRY_LIMIT = 501,
  FDB_TR_OPTION_MAX_RETRY_DELAY = 502,
  FDB_TR_OPTION_SIZE_LIMIT = 503,
  FDB_TR_OPTION_SNAPSHOT_RYW_ENABLE = 600,
  FDB_TR_OPTION_SNAPSHOT_RYW_DISABLE = 601,
  FDB_TR_OPTION_REPORT_CONFLICTING_KEYS = 712,
  FDB_TR_OPTION_SPECIAL_KEY_SPACE_RELAXED = 713,
  FDB_TR_OPTION_SPECIAL_KEY_SPACE_ENABLE_WRITES = 714
};

/* ---- API version, errors ------------------------------------------------------------ */

fdb_error_t fdb_select_api_version_impl(int runtime_version, int header_version);
int fdb_get_max_api_version(void);
const char* fdb_get_client_version(void);
const char* fdb_get_error(fdb_error_t code);
fdb_bool_t fdb_error_predicate(int predicate_test, fdb_error_t code);

/* ---- Network ------------------------------------------------------------------------ */

fdb_error_t fdb_network_set_option(FDBNetworkOption option, const uint8_t* value, int value_length);
fdb_error_t fdb_setup_network(void);
fdb_error_t fdb_run_network(void);
fdb_error_t fdb_stop_network(void);
fdb_error_t fdb_add_network_thread_completion_hook(void (*hook)(void*), void* hook_parameter);

/* ---- Futures ------------------------------------------------------------------------ */

void fdb_future_cancel(FDBFuture* f);
void fdb_future_release_memory(FDBFuture* f);
void fdb_future_destroy(FDBFuture* f);
fdb_error_t fdb_future_block_until_ready(FDBFuture* f);
fdb_bool_t fdb_future_is_ready(FDBFuture* f);
fdb_error_t fdb_future_set_callback(FDBFuture* f, FDBCallback callback, void* callback_parameter);
fdb_error_t fdb_future_get_error(FDBFuture* f);
fdb_error_t fdb_future_get_bool(FDBFuture* f, fdb_bool_t* out);
fdb_error_t fdb_future_get_int64(FDBFuture* f, int64_t* out);
fdb_error_t fdb_future_get_uint64(FDBFuture* f, uint64_t* out);
fdb_error_t fdb_future_get_double(FDBFuture* f, double* out); /* API 730 */
fdb_error_t fdb_future_get_key(FDBFuture* f, const uint8_t** out_key, int* out_key_length);
fdb_error_t fdb_future_get_value(FDBFuture* f, fdb_bool_t* out_present, const uint8_t** out_value,
                                 int* out_value_length);
fdb_error_t fdb_future_get_keyvalue_array(FDBFuture* f, const FDBKeyValue** out_kv, int* out_count,
                                          fdb_bool_t* out_more);
fdb_error_t fdb_future_get_key_array(FDBFuture* f, const FDBKey** out_key_array, int* out_count);
fdb_error_t fdb_future_get_string_array(FDBFuture* f, const char*** out_strings, int* out_count);
fdb_error_t fdb_future_get_keyrange_array(FDBFuture* f, const FDBKeyRange** out_ranges,
                                          int* out_count);
fdb_error_t fdb_future_get_granule_summary_array(FDBFuture* f,
                                                 const FDBGranuleSummary** out_summaries,
                                                 int* out_count);
fdb_error_t fdb_future_get_mappedkeyvalue_array(FDBFuture* f, const FDBMappedKeyValue** out_kv,
                                                int* out_count, fdb_bool_t* out_more);
fdb_error_t fdb_future_readbg_get_descriptions(FDBFuture* f, FDBBGFileDescription** out,
                                               int* desc_count);

/* FDBResult: a result computed at once (fdb_transaction_read_blob_granules, the readbg
   parsers). */
void fdb_result_destroy(FDBResult* r);
fdb_error_t fdb_result_get_keyvalue_array(FDBResult* r, const FDBKeyValue** out_kv, int* out_count,
                                          fdb_bool_t* out_more);
fdb_error_t fdb_result_get_bg_mutations_array(FDBResult* r, const FDBBGMutation** out_mutations,
                                              int* out_count);
FDBResult* fdb_readbg_parse_snapshot_file(const uint8_t* file_data, int file_len,
                                          const FDBBGTenantPrefix* tenant_prefix,
                                          const FDBBGEncryptionCtx* encryption_ctx);
FDBResult* fdb_readbg_parse_delta_file(const uint8_t* file_data, int file_len,
                                       const FDBBGTenantPrefix* tenant_prefix,
                                       const FDBBGEncryptionCtx* encryption_ctx);

/* ---- Databases ---------------------------------------------------------------------- */

fdb_error_t fdb_create_database(const char* cluster_file_path, FDBDatabase** out_database);
fdb_error_t fdb_create_database_from_connection_string(const char* connection_string,
                                                       FDBDatabase** out_database);
void fdb_database_destroy(FDBDatabase* d);
fdb_error_t fdb_database_set_option(FDBDatabase* d, FDBDatabaseOption option, const uint8_t* value,
                                    int value_length);
fdb_error_t fdb_database_create_transaction(FDBDatabase* d, FDBTransaction** out_transaction);
double fdb_database_get_main_thread_busyness(FDBDatabase* d);
fdb_error_t fdb_database_open_tenant(FDBDatabase* d, const uint8_t* tenant_name,
                                     int tenant_name_length, FDBTenant** out_tenant);
FDBFuture* fdb_database_reboot_worker(FDBDatabase* d, const uint8_t* address, int address_length,
                                      fdb_bool_t check, int duration);
FDBFuture* fdb_database_force_recovery_with_data_loss(FDBDatabase* d, const uint8_t* dcid,
                                                      int dcid_length);
FDBFuture* fdb_database_create_snapshot(FDBDatabase* d, const uint8_t* uid, int uid_length,
                                        const uint8_t* snap_command, int snap_command_length);
FDBFuture* fdb_database_get_server_protocol(FDBDatabase* d, uint64_t expected_version);
FDBFuture* fdb_database_purge_blob_granules(FDBDatabase* d, const uint8_t* begin_key_name,
                                            int begin_key_name_length, const uint8_t* end_key_name,
                                            int end_key_name_length, int64_t purge_version,
                                            fdb_bool_t force);
FDBFuture* fdb_database_wait_purge_granules_complete(FDBDatabase* d, const uint8_t* purge_key_name,
                                                     int purge_key_name_length);
FDBFuture* fdb_database_blobbify_range(FDBDatabase* d, const uint8_t* begin_key_name,
                                       int begin_key_name_length, const uint8_t* end_key_name,
                                       int end_key_name_length);
FDBFuture* fdb_database_unblobbify_range(FDBDatabase* d, const uint8_t* begin_key_name,
                                         int begin_key_name_length, const uint8_t* end_key_name,
                                         int end_key_name_length);
FDBFuture* fdb_database_list_blobbified_ranges(FDBDatabase* d, const uint8_t* begin_key_name,
                                               int begin_key_name_length,
                                               const uint8_t* end_key_name, int end_key_name_length,
                                               int range_limit);
FDBFuture* fdb_database_verify_blob_range(FDBDatabase* d, const uint8_t* begin_key_name,
                                          int begin_key_name_length, const uint8_t* end_key_name,
                                          int end_key_name_length, int64_t version);
/* API 730 */
FDBFuture* fdb_database_blobbify_range_blocking(FDBDatabase* d, const uint8_t* begin_key_name,
                                                int begin_key_name_length,
                                                const uint8_t* end_key_name,
                                                int end_key_name_length);
FDBFuture* fdb_database_flush_blob_range(FDBDatabase* d, const uint8_t* begin_key_name,
                                         int begin_key_name_length, const uint8_t* end_key_name,
                                         int end_key_name_length, fdb_bool_t compact,
                                         int64_t version);
FDBFuture* fdb_database_get_client_status(FDBDatabase* d);

/* ---- Tenants ------------------------------------------------------------------------ */

fdb_error_t fdb_tenant_create_transaction(FDBTenant* tenant, FDBTransaction** out_transaction);
void fdb_tenant_destroy(FDBTenant* tenant);
FDBFuture* fdb_tenant_purge_blob_granules(FDBTenant* tenant, const uint8_t* begin_key_name,
                                          int begin_key_name_length, const uint8_t* end_key_name,
                                          int end_key_name_length, int64_t purge_version,
                                          fdb_bool_t force);
FDBFuture* fdb_tenant_wait_purge_granules_complete(FDBTenant* tenant, const uint8_t* purge_key_name,
                                                   int purge_key_name_length);
FDBFuture* fdb_tenant_blobbify_range(FDBTenant* tenant, const uint8_t* begin_key_name,
                                     int begin_key_name_length, const uint8_t* end_key_name,
                                     int end_key_name_length);
FDBFuture* fdb_tenant_unblobbify_range(FDBTenant* tenant, const uint8_t* begin_key_name,
                                       int begin_key_name_length, const uint8_t* end_key_name,
                                       int end_key_name_length);
FDBFuture* fdb_tenant_list_blobbified_ranges(FDBTenant* tenant, const uint8_t* begin_key_name,
                                             int begin_key_name_length, const uint8_t* end_key_name,
                                             int end_key_name_length, int range_limit);
FDBFuture* fdb_tenant_verify_blob_range(FDBTenant* tenant, const uint8_t* begin_key_name,
                                        int begin_key_name_length, const uint8_t* end_key_name,
                                        int end_key_name_length, int64_t version);
/* API 730 */
FDBFuture* fdb_tenant_blobbify_range_blocking(FDBTenant* tenant, const uint8_t* begin_key_name,
                                              int begin_key_name_length,
                                              const uint8_t* end_key_name, int end_key_name_length);
FDBFuture* fdb_tenant_flush_blob_range(FDBTenant* tenant, const uint8_t* begin_key_name,
                                       int begin_key_name_length, const uint8_t* end_key_name,
                                       int end_key_name_length, fdb_bool_t compact,
                                       int64_t version);
FDBFuture* fdb_tenant_get_id(FDBTenant* tenant);

/* ---- Transactions ------------------------------------------------------------------- */

void fdb_transaction_destroy(FDBTransaction* tr);
void fdb_transaction_cancel(FDBTransaction* tr);
fdb_error_t fdb_transaction_set_option(FDBTransaction* tr, FDBTransactionOption option,
                                       const uint8_t* value, int value_length);
void fdb_transaction_set_read_version(FDBTransaction* tr, int64_t version);
FDBFuture* fdb_transaction_get_read_version(FDBTransaction* tr);
FDBFuture* fdb_transaction_get(FDBTransaction* tr, const uint8_t* key_name, int key_name_length,
                               fdb_bool_t snapshot);
FDBFuture* fdb_transaction_get_key(FDBTransaction* tr, const uint8_t* key_name, int key_name_length,
                                   fdb_bool_t or_equal, int offset, fdb_bool_t snapshot);
FDBFuture* fdb_transaction_get_addresses_for_key(FDBTransaction* tr, const uint8_t* key_name,
                                                 int key_name_length);
FDBFuture* fdb_transaction_get_range(FDBTransaction* tr, const uint8_t* begin_key_name,
                                     int begin_key_name_length, fdb_bool_t begin_or_equal,
                                     int begin_offset, const uint8_t* end_key_name,
                                     int end_key_name_length, fdb_bool_t end_or_equal,
                                     int end_offset, int limit, int target_bytes,
                                     FDBStreamingMode mode, int iteration, fdb_bool_t snapshot,
                                     fdb_bool_t reverse);
void fdb_transaction_set(FDBTransaction* tr, const uint8_t* key_name, int key_name_length,
                         const uint8_t* value, int value_length);
void fdb_transaction_atomic_op(FDBTransaction* tr, const uint8_t* key_name, int key_name_length,
                               const uint8_t* param, int param_length,
                               FDBMutationType operation_type);
void fdb_transaction_clear(FDBTransaction* tr, const uint8_t* key_name, int key_name_length);
void fdb_transaction_clear_range(FDBTransaction* tr, const uint8_t* begin_key_name,
                                 int begin_key_name_length, const uint8_t* end_key_name,
                                 int end_key_name_length);
FDBFuture* fdb_transaction_watch(FDBTransaction* tr, const uint8_t* key_name, int key_name_length);
FDBFuture* fdb_transaction_commit(FDBTransaction* tr);
fdb_error_t fdb_transaction_get_committed_version(FDBTransaction* tr, int64_t* out_version);
FDBFuture* fdb_transaction_get_approximate_size(FDBTransaction* tr);
FDBFuture* fdb_transaction_get_tag_throttled_duration(FDBTransaction* tr); /* API 730 */
FDBFuture* fdb_transaction_get_total_cost(FDBTransaction* tr);             /* API 730 */
FDBFuture* fdb_transaction_get_versionstamp(FDBTransaction* tr);
FDBFuture* fdb_transaction_on_error(FDBTransaction* tr, fdb_error_t error);
void fdb_transaction_reset(FDBTransaction* tr);
fdb_error_t fdb_transaction_add_conflict_range(FDBTransaction* tr, const uint8_t* begin_key_name,
                                               int begin_key_name_length,
                                               const uint8_t* end_key_name, int end_key_name_length,
                                               FDBConflictRangeType type);
FDBFuture* fdb_transaction_get_estimated_range_size_bytes(FDBTransaction* tr,
                                                          const uint8_t* begin_key_name,
                                                          int begin_key_name_length,
                                                          const uint8_t* end_key_name,
                                                          int end_key_name_length);
FDBFuture* fdb_transaction_get_range_split_points(FDBTransaction* tr, const uint8_t* begin_key_name,
                                                  int begin_key_name_length,
                                                  const uint8_t* end_key_name,
                                                  int end_key_name_length, int64_t chunk_size);
FDBFuture* fdb_transaction_get_mapped_range(FDBTransaction* tr, const uint8_t* begin_key_name,
                                            int begin_key_name_length, fdb_bool_t begin_or_equal,
                                            int begin_offset, const uint8_t* end_key_name,
                                            int end_key_name_length, fdb_bool_t end_or_equal,
                                            int end_offset, const uint8_t* mapper_name,
                                            int mapper_name_length, int limit, int target_bytes,
                                            FDBStreamingMode mode, int iteration,
                                            fdb_bool_t snapshot, fdb_bool_t reverse);
FDBFuture* fdb_transaction_get_blob_granule_ranges(FDBTransaction* tr,
                                                   const uint8_t* begin_key_name,
                                                   int begin_key_name_length,
                                                   const uint8_t* end_key_name,
                                                   int end_key_name_length, int range_limit);
FDBResult* fdb_transaction_read_blob_granules(FDBTransaction* tr, const uint8_t* begin_key_name,
                                              int begin_key_name_length,
                                              const uint8_t* end_key_name, int end_key_name_length,
                                              int64_t begin_version, int64_t read_version,
                                              FDBReadBlobGranuleContext granule_context);
FDBFuture* fdb_transaction_summarize_blob_granules(
    FDBTransaction* tr, const uint8_t* begin_key_name, int begin_key_name_length,
    const uint8_t* end_key_name, int end_key_name_length, int64_t summary_version, int range_limit);
FDBFuture* fdb_transaction_read_blob_granules_description(/* API 730 */
                                                          FDBTransaction* tr,
                                                          const uint8_t* begin_key_name,
                                                          int begin_key_name_length,
                                                          const uint8_t* end_key_name,
                                                          int end_key_name_length,
                                                          int64_t begin_version,
                                                          int64_t read_version,
                                                          int64_t* read_version_out);

#ifdef __cplusplus
}
#endif

/* NOLINTEND */

#pragma GCC visibility pop

#endif /* STRATA_FDB_C_H */
