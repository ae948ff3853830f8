// cluster/client.hpp: FoundationDB's client library, loaded at run time.
//
// strata never links libfdb_c: the first Database opened on a cluster loads the library
// named by Options::client_library with dlopen, resolves every function it calls with
// dlsym (the declarations of src/fdb_c/fdb_c.h give their types), selects the API version
// and starts FoundationDB's network thread. That happens once per process; the function
// table is never freed, and the network is stopped, and its thread joined, at exit. A
// process runs one client library: asking for another once one is running throws
// client_invalid_operation (2000) without loading it. Another name for the running library
// is that library: a name is the same library when dlopen with RTLD_NOLOAD gives the
// running library's handle ("" and "libfdb_c.so" when both find one file, a symlink).
//
// Errors: client_library_unavailable (9014) when the library cannot be loaded or lacks a
// function strata calls; api_version_not_supported (2203) when it supports no API version
// from kMinApiVersion on; the code FoundationDB returns when its network fails to start
// (every later call throws that same error: the API version is selected once per process).
//
// Thread safety: client() may be called from any thread; the table it returns is
// immutable.
#pragma once

#include <string>

#include "strata/error.hpp"

#include "fdb_c/fdb_c.h"

namespace strata::cluster {

// The API version strata selects: the newest one its calls need that FoundationDB 7.3's
// client offers (730), or the library's newest if that is lower but at least 710.
inline constexpr int kApiVersion = 730;
inline constexpr int kMinApiVersion = 710;

// X(name): the C function fdb_<name>, a member <name> of FdbApi.
#define STRATA_CLUSTER_FDB_FUNCTIONS(X) \
  X(select_api_version_impl)            \
  X(get_max_api_version)                \
  X(get_error)                          \
  X(setup_network)                      \
  X(run_network)                        \
  X(stop_network)                       \
  X(future_cancel)                      \
  X(future_destroy)                     \
  X(future_block_until_ready)           \
  X(future_set_callback)                \
  X(future_get_error)                   \
  X(future_get_int64)                   \
  X(future_get_key)                     \
  X(future_get_value)                   \
  X(future_get_keyvalue_array)          \
  X(create_database)                    \
  X(database_destroy)                   \
  X(database_set_option)                \
  X(database_create_transaction)        \
  X(transaction_destroy)                \
  X(transaction_cancel)                 \
  X(transaction_set_option)             \
  X(transaction_set_read_version)       \
  X(transaction_get_read_version)       \
  X(transaction_get)                    \
  X(transaction_get_range)              \
  X(transaction_set)                    \
  X(transaction_atomic_op)              \
  X(transaction_clear)                  \
  X(transaction_clear_range)            \
  X(transaction_watch)                  \
  X(transaction_commit)                 \
  X(transaction_get_committed_version)  \
  X(transaction_get_approximate_size)   \
  X(transaction_get_versionstamp)       \
  X(transaction_on_error)               \
  X(transaction_reset)                  \
  X(transaction_add_conflict_range)

// The functions of one loaded client library.
struct FdbApi {
#define STRATA_CLUSTER_FDB_MEMBER(name) decltype(&::fdb_##name) name = nullptr;
  STRATA_CLUSTER_FDB_FUNCTIONS(STRATA_CLUSTER_FDB_MEMBER)
#undef STRATA_CLUSTER_FDB_MEMBER
  int api_version = 0;  // the version selected
  std::string library;  // the path it was loaded from, as given
};

// The process's client, loaded from `library` ("" : "libfdb_c.so" from the loader's search
// path) with its network running. Throws as the header says.
const FdbApi& client(const std::string& library);

// Whether the calling thread is FoundationDB's network thread, where callbacks run and no
// call may block (it would wait for the thread that is waiting).
bool on_network_thread();
// Whether FoundationDB's network has been stopped at exit (and its thread joined): no
// future becomes ready after that ("fdb_run_network: must be called ... before any
// asynchronous functions in this API can be expected to complete",
// https://apple.github.io/foundationdb/api-c.html), and no callback runs. Cluster objects
// destroyed later (by statics made before the first cluster was opened, or by atexit
// handlers registered before it) then leave FoundationDB's handles to the exiting process
// rather than call into a client that has stopped.
bool network_stopped();
// Throws client_invalid_operation (2000) where a blocking call could never return: on the
// network thread (a commit_async or on_ready callback would wait for itself), and once the
// network has stopped (check_network_running).
void check_may_block(const char* what);
// Throws client_invalid_operation (2000) once the network has stopped: what `what` waits
// for, a wait or a callback, would never come.
void check_network_running(const char* what);

// The strata::Error for FoundationDB's `code`: the same number; FoundationDB's description
// joins the message when strata's table does not know the code. `context` (may be empty)
// says what failed.
Error fdb_error(const FdbApi& api, fdb_error_t code, const std::string& context = {});
[[noreturn]] void throw_fdb(const FdbApi& api, fdb_error_t code, const std::string& context = {});

}  // namespace strata::cluster
