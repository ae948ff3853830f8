// fdb_c/api_version.hpp: the process's selected API version (0 until selected).
#pragma once

#include <cstdint>

namespace strata::fdb_c {

inline constexpr int kMaxApiVersion = 720;
inline constexpr int kMinRuntimeVersion = 510;
inline constexpr int kMinHeaderVersion = 620;  // older headers had fdb_future_get_version

// FoundationDB 7.2's protocol version, what fdb_database_get_server_protocol reports.
inline constexpr std::uint64_t kServerProtocol = 0x0FDB00B072000000;

int api_version();

}  // namespace strata::fdb_c
