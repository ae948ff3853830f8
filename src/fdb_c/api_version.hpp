// fdb_c/api_version.hpp: the process's selected API version (0 until selected).
#pragma once

namespace strata::fdb_c {

inline constexpr int kMaxApiVersion = 720;
inline constexpr int kMinRuntimeVersion = 510;
inline constexpr int kMinHeaderVersion = 620;  // older headers had fdb_future_get_version

int api_version();

}  // namespace strata::fdb_c
