// Loading FoundationDB's client library, and its one network thread.
#include "cluster/client.hpp"

#include <algorithm>
#include <atomic>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>

#include <dlfcn.h>

namespace strata::cluster {
namespace {

constexpr const char* kDefaultLibrary = "libfdb_c.so";

[[noreturn]] void unavailable(const std::string& what) {
  throw Error(ErrorCode::client_library_unavailable, what);
}

// Resolves every function of the table, or says which one is missing.
FdbApi resolve(void* handle, const std::string& name) {
  FdbApi api;
#define STRATA_CLUSTER_FDB_RESOLVE(fn)                                                 \
  api.fn = reinterpret_cast<decltype(api.fn)>(dlsym(handle, "fdb_" #fn)); /* NOLINT */ \
  if (api.fn == nullptr) {                                                             \
    unavailable(name + " is not FoundationDB's client library: it has no fdb_" #fn);   \
  }
  STRATA_CLUSTER_FDB_FUNCTIONS(STRATA_CLUSTER_FDB_RESOLVE)
#undef STRATA_CLUSTER_FDB_RESOLVE
  return api;
}

// The loaded client and its network thread. Never destroyed before exit; at exit the
// network is stopped and its thread joined (stop() below, from a static's destructor).
struct Loaded {
  FdbApi api;
  std::thread network;
};

struct Process {
  std::mutex mu;
  std::unique_ptr<Loaded> loaded;  // guarded by mu
  std::atomic<std::thread::id> network_thread{};

  ~Process() {
    // Exit: stop FoundationDB's network and wait for its thread, so no callback runs while
    // the process's statics go away.
    if (loaded == nullptr) return;
    if (loaded->api.stop_network() == 0 && loaded->network.joinable()) {
      loaded->network.join();
    } else if (loaded->network.joinable()) {
      loaded->network.detach();
    }
  }
};

Process& process() {
  static Process p;
  return p;
}

// Loads and checks `library` and selects the API version; nothing of the process's
// changes when it throws (a library that failed stays loaded, unused).
FdbApi load(const std::string& library) {
  const std::string name = library.empty() ? std::string(kDefaultLibrary) : library;
  void* handle = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    unavailable("cannot load FoundationDB's client library " + name + ": " +
                (why != nullptr ? why : "unknown reason") +
                " (install FoundationDB's client package, or name the library in "
                "Options::client_library)");
  }
  FdbApi api = resolve(handle, name);
  api.library = library;
  const int newest = api.get_max_api_version();
  if (newest < kMinApiVersion) {
    throw Error(ErrorCode::api_version_not_supported,
                name + " supports FoundationDB API versions up to " + std::to_string(newest) +
                    "; strata needs " + std::to_string(kMinApiVersion) +
                    " or newer (FoundationDB 7.1 or newer)");
  }
  api.api_version = std::min(newest, kApiVersion);
  return api;
}

}  // namespace

const FdbApi& client(const std::string& library) {
  Process& p = process();
  std::lock_guard lock(p.mu);
  if (p.loaded != nullptr && p.loaded->api.library == library) return p.loaded->api;
  FdbApi api = load(library);
  if (p.loaded != nullptr) {
    throw Error(ErrorCode::client_invalid_operation,
                "this process already runs FoundationDB's client from '" + p.loaded->api.library +
                    "'; a process runs one client library (asked for '" + library + "')");
  }
  if (const fdb_error_t e = api.select_api_version_impl(api.api_version, api.api_version)) {
    throw_fdb(api, e, "selecting FoundationDB API version " + std::to_string(api.api_version));
  }
  if (const fdb_error_t e = api.setup_network()) throw_fdb(api, e, "setting up the network");
  auto loaded = std::make_unique<Loaded>();
  loaded->api = std::move(api);
  auto run = loaded->api.run_network;
  loaded->network = std::thread([run] { (void)run(); });
  p.network_thread.store(loaded->network.get_id(), std::memory_order_release);
  p.loaded = std::move(loaded);
  return p.loaded->api;
}

bool on_network_thread() {
  return std::this_thread::get_id() == process().network_thread.load(std::memory_order_acquire);
}

Error fdb_error(const FdbApi& api, fdb_error_t code, const std::string& context) {
  const auto ec = static_cast<ErrorCode>(code);
  std::string detail = context;
  if (error_name(ec) == "unknown_error") {
    const char* text = api.get_error(code);
    if (!detail.empty()) detail += ": ";
    detail += "FoundationDB error " + std::to_string(code) + " (" +
              (text != nullptr ? text : "no description") + ")";
  } else if (!detail.empty()) {
    detail += ": ";
    detail += error_description(ec);
  }
  return Error(ec, std::move(detail));
}

void throw_fdb(const FdbApi& api, fdb_error_t code, const std::string& context) {
  throw fdb_error(api, code, context);
}

}  // namespace strata::cluster
