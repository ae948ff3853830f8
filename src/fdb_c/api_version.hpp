// fdb_c/api_version.hpp: the process's selected API version (0 until selected).
#pragma once

#include <cstdint>

namespace strata::fdb_c {

// FoundationDB 7.4's client: a binding of 7.2, 7.3 or 7.4 selects its header's version (7.3
// and 7.4 share the C ABI; 730 added functions only, docs/decisions/0021).
inline constexpr int kMaxApiVersion = 740;
inline constexpr int kMinRuntimeVersion = 510;
inline constexpr int kMinHeaderVersion = 620;  // older headers had fdb_future_get_version

// FoundationDB 7.4's protocol version, what fdb_database_get_server_protocol and the client
// status report.
inline constexpr std::uint64_t kServerProtocol = 0x0FDB00B074000000;
// The FoundationDB release whose client strata's answers follow, and fdb_get_client_version:
// "<release>,<source id>,<protocol version in hex>", as FoundationDB's.
inline constexpr const char* kReleaseVersion = "7.4.0";
inline constexpr const char* kClientVersion = "7.4.0,strata,fdb00b074000000";

int api_version();

}  // namespace strata::fdb_c
