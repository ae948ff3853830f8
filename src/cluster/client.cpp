// Loading FoundationDB's client library, and its one network thread.
#include "cluster/client.hpp"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <memory>
#include <optional>
#include <thread>
#include <utility>

#include "base/mutex.hpp"
#include "base/thread_annotations.hpp"
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

// The loaded client and its network thread.
struct Loaded {
  FdbApi api;
  void* handle = nullptr;  // dlopen's, to tell whether another name is the same library
  std::thread network;
};

// Never destroyed (process() leaks it): handles, and callbacks on the network thread, may
// use the function table until the process is gone. The network is stopped at exit by
// NetworkStop below.
struct Process {
  base::Mutex mu;
  std::unique_ptr<Loaded> loaded GUARDED_BY(mu);
  std::optional<Error> broken GUARDED_BY(mu);  // why the network could not start
  std::atomic<std::thread::id> network_thread{};
  std::atomic<bool> stopped{false};  // set by NetworkStop once no callback can run
};

Process& process() {
  static Process& p = *new Process;  // NOLINT: leaked on purpose (above)
  return p;
}

// A static made once the network runs: at exit, its destructor stops FoundationDB's network
// and joins the thread, so no callback runs while the statics made before it go away.
// FoundationDB requires that: "You must call this function and wait for fdb_run_network()
// to return before allowing your program to exit" (fdb_stop_network,
// https://apple.github.io/foundationdb/api-c.html). An exit on the network thread itself (a
// callback calling exit) cannot wait for itself: the network is stopped, not joined. Once
// the stop succeeded it marks the network stopped: cluster objects that outlive it (held by
// statics made earlier, or by atexit handlers registered earlier) call FoundationDB no
// more, and a wait refuses rather than hangs (network_stopped in cluster/client.hpp).
struct NetworkStop {
  NetworkStop() = default;
  NetworkStop(const NetworkStop&) = delete;
  NetworkStop& operator=(const NetworkStop&) = delete;
  ~NetworkStop() {
    Loaded* running = nullptr;
    {
      Process& p = process();
      base::MutexLock lock(p.mu);
      running = p.loaded.get();  // set before this was made, and never reset
    }
    Loaded& loaded = *running;
    const bool stopped = loaded.api.stop_network() == 0;
    if (stopped && loaded.network.get_id() != std::this_thread::get_id()) {
      loaded.network.join();
    } else {
      loaded.network.detach();
    }
    // A network that would not stop may still run callbacks: its objects keep waiting.
    if (stopped) process().stopped.store(true, std::memory_order_release);
  }
};

// Runs FoundationDB's network until it is stopped; an error that ends it early is reported
// on stderr, since no caller is left to be told and every later operation would hang.
void run_network(const FdbApi& api) {
  if (const fdb_error_t e = api.run_network()) {
    const char* text = api.get_error(e);
    std::fprintf(stderr, "strata: FoundationDB's network thread stopped with error %d (%s)\n",
                 static_cast<int>(e), text != nullptr ? text : "no description");
  }
}

// dlopen's handle for `name` when it is already loaded, else null; loads nothing.
void* already_loaded(const std::string& name) {
  return dlopen(name.c_str(), RTLD_NOW | RTLD_NOLOAD);
}

std::string library_name(const std::string& library) {
  return library.empty() ? std::string(kDefaultLibrary) : library;
}

// Loads and checks `library` and selects the API version; nothing of the process's
// changes when it throws (a library that failed stays loaded, unused).
FdbApi load(const std::string& library, void*& handle) {
  const std::string name = library_name(library);
  handle = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
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

// With a client loaded: the same library under another name (the same dlopen handle, as
// "" and "libfdb_c.so", or a symlink, give) is the running client; another is refused
// without being loaded.
const FdbApi& same_library(const Loaded& loaded, const std::string& library) {
  if (void* h = already_loaded(library_name(library))) {
    const bool same = h == loaded.handle;
    dlclose(h);  // RTLD_NOLOAD counted a reference
    if (same) return loaded.api;
  }
  throw Error(ErrorCode::client_invalid_operation,
              "this process already runs FoundationDB's client from '" + loaded.api.library +
                  "'; a process runs one client library (asked for '" + library + "')");
}

}  // namespace

const FdbApi& client(const std::string& library) {
  Process& p = process();
  base::MutexLock lock(p.mu);
  if (p.loaded != nullptr) {
    if (p.loaded->api.library == library) return p.loaded->api;
    return same_library(*p.loaded, library);
  }
  // The API version is selected once per process (a second selection is 2201): once the
  // network failed to start after it, every open gets that first error.
  if (p.broken) throw *p.broken;
  // Made before the selection, while a throw leaves nothing to undo: the reason the
  // process keeps should a later step fail for want of memory or a thread.
  Error start_failure(ErrorCode::internal_error,
                      "out of memory or threads starting FoundationDB's network");
  auto loaded = std::make_unique<Loaded>();
  loaded->api = load(library, loaded->handle);
  const FdbApi& table = loaded->api;  // lives as long as the process (never freed)
  if (const fdb_error_t e = table.select_api_version_impl(table.api_version, table.api_version)) {
    throw_fdb(table, e, "selecting FoundationDB API version " + std::to_string(table.api_version));
  }
  // Selected: from here a failure is the process's for good (moving an Error throws
  // nothing).
  try {
    if (const fdb_error_t e = table.setup_network()) {
      throw fdb_error(table, e, "setting up the network");
    }
    loaded->network = std::thread([&table] { run_network(table); });
  } catch (Error& e) {
    p.broken = std::move(e);
    throw *p.broken;
  } catch (...) {  // std::bad_alloc, or std::system_error: no thread to be had
    p.broken = std::move(start_failure);
    throw *p.broken;
  }
  p.network_thread.store(loaded->network.get_id(), std::memory_order_release);
  p.loaded = std::move(loaded);
  static NetworkStop stop;  // made once, after the network runs
  return p.loaded->api;
}

bool network_stopped() { return process().stopped.load(std::memory_order_acquire); }

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
