// Fuzzes the C API's key selector and range arguments (fdb_transaction_get_key and
// fdb_transaction_get_range: keys, or_equal, offsets, limit, target_bytes, streaming
// mode, iteration, snapshot, reverse) over a small fixed set of keys, against a model:
// - invalid batch arguments fail with FoundationDB's codes (2012 range_limits_invalid,
//   2210 exact_mode_without_limits, 2000 client_invalid_operation), keys beyond "\xff"
//   with 2004 key_outside_legal_range, and nothing else fails;
// - a selector resolves to the key the model's rule gives (the last key < key, or <= with
//   or_equal, then `offset` keys on, in 64 bits; before the first key "", past the last
//   "\xff");
// - a range read returns the first rows (the last, reversed) of the model's rows between
//   its resolved ends, at least one when there are any, and says `more` exactly when it
//   returned fewer than all of them.
// Keys in the special key space (from "\xff\xff") are read but not checked against the
// model (their rows are made by the C API): they may only fail with a client error.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "fdb_c/fdb_c.h"

namespace {

void check(bool ok) {
  if (!ok) std::abort();
}

// Keys and values: few, short, so every batch size FoundationDB's modes give holds them all
// (the smallest, SMALL's, is 256 bytes) and only limit and target_bytes end a batch early.
const std::vector<std::string>& model_keys() {
  static const std::vector<std::string> keys = {
      std::string(), std::string("\x00", 1), "a", std::string("a\x00", 2), "b", "m", "z", "\xfe",
      "\xfe\xff"};
  return keys;
}

FDBDatabase* g_db = nullptr;

int fuzz_init() {
  check(fdb_select_api_version_impl(STRATA_FDB_API_VERSION, STRATA_FDB_API_VERSION) == 0);
  check(fdb_setup_network() == 0);
  std::thread([] { fdb_run_network(); }).detach();  // for the life of the process
  check(fdb_create_database(nullptr, &g_db) == 0);
  FDBTransaction* tr = nullptr;
  check(fdb_database_create_transaction(g_db, &tr) == 0);
  for (const std::string& k : model_keys()) {
    fdb_transaction_set(tr, reinterpret_cast<const uint8_t*>(k.data()), static_cast<int>(k.size()),
                        reinterpret_cast<const uint8_t*>("v"), 1);
  }
  FDBFuture* f = fdb_transaction_commit(tr);
  check(fdb_future_block_until_ready(f) == 0 && fdb_future_get_error(f) == 0);
  fdb_future_destroy(f);
  fdb_transaction_destroy(tr);
  return 0;
}

// Reads the input front to back; past its end every field is zero.
class Input {
 public:
  Input(const uint8_t* data, std::size_t size) : data_(data), size_(size) {}
  uint8_t byte() { return pos_ < size_ ? data_[pos_++] : 0; }
  int32_t int32() {
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) v = v << 8 | byte();
    return static_cast<int32_t>(v);
  }
  // Up to 4 bytes, or one of the model's keys (so selectors land on and beside them).
  std::string key() {
    const uint8_t how = byte();
    if (how < 128) return model_keys()[how % model_keys().size()];
    std::string k;
    for (int n = how % 5; n > 0; --n) k.push_back(static_cast<char>(byte()));
    return k;
  }

 private:
  const uint8_t* data_;
  std::size_t size_;
  std::size_t pos_ = 0;
};

struct Selector {
  std::string key;
  bool or_equal;
  int32_t offset;
};

Selector selector(Input& in) {
  Selector s;
  s.key = in.key();
  const uint8_t flags = in.byte();
  s.or_equal = (flags & 1) != 0;
  // Mostly the offsets of the four named selectors and their neighbours; sometimes any.
  switch ((flags >> 1) % 4) {
    case 0:
      s.offset = static_cast<int32_t>(in.byte() % 5) - 2;
      break;
    case 1:
      s.offset = INT32_MIN + in.byte() % 3;
      break;
    case 2:
      s.offset = INT32_MAX - in.byte() % 3;
      break;
    default:
      s.offset = in.int32();
      break;
  }
  return s;
}

bool special(const std::string& key) { return key.compare(0, 2, "\xff\xff") == 0; }
bool beyond_keyspace(const std::string& key) { return key > "\xff"; }

// The model's resolution of a selector whose key is within the keyspace.
std::string resolve(const Selector& s) {
  const auto& keys = model_keys();
  const auto base = s.or_equal ? std::upper_bound(keys.begin(), keys.end(), s.key)
                               : std::lower_bound(keys.begin(), keys.end(), s.key);
  const int64_t i = (base - keys.begin()) - 1 + static_cast<int64_t>(s.offset);
  if (i < 0) return std::string();
  if (i >= static_cast<int64_t>(keys.size())) return "\xff";
  return keys[static_cast<std::size_t>(i)];
}

const uint8_t* u8(const std::string& s) { return reinterpret_cast<const uint8_t*>(s.data()); }
int len(const std::string& s) { return static_cast<int>(s.size()); }

void fuzz_get_key(FDBTransaction* tr, Input& in) {
  const Selector s = selector(in);
  const bool snapshot = (in.byte() & 1) != 0;
  FDBFuture* f = fdb_transaction_get_key(tr, u8(s.key), len(s.key), s.or_equal, s.offset, snapshot);
  check(fdb_future_block_until_ready(f) == 0);
  const fdb_error_t e = fdb_future_get_error(f);
  if (special(s.key)) {
    check(e == 0 || (e >= 2000 && e < 3000));  // the special key space's own errors
  } else if (beyond_keyspace(s.key)) {
    check(e == 2004);
  } else {
    check(e == 0);
    const uint8_t* key = nullptr;
    int key_length = 0;
    check(fdb_future_get_key(f, &key, &key_length) == 0);
    check(std::string(reinterpret_cast<const char*>(key), static_cast<std::size_t>(key_length)) ==
          resolve(s));
  }
  fdb_future_destroy(f);
}

// The error FoundationDB's batch rules give these arguments, 0 if they are valid.
fdb_error_t batch_error(int limit, int target_bytes, int mode, int iteration) {
  if (limit < -1 || target_bytes < -1) return 2012;
  if (mode < FDB_STREAMING_MODE_WANT_ALL || mode > FDB_STREAMING_MODE_SERIAL) return 2000;
  if (mode == FDB_STREAMING_MODE_ITERATOR && iteration <= 0) return 2000;
  if (limit <= 0 && target_bytes <= 0 && mode == FDB_STREAMING_MODE_EXACT) return 2210;
  return 0;
}

int32_t small_or_any(Input& in) {
  const uint8_t how = in.byte();
  if (how < 200) return static_cast<int32_t>(how % 8) - 2;  // -2 .. 5
  if (how < 230) return how % 2 == 0 ? INT32_MIN : INT32_MAX;
  return in.int32();
}

void fuzz_get_range(FDBTransaction* tr, Input& in) {
  const Selector b = selector(in);
  const Selector e = selector(in);
  const int32_t limit = small_or_any(in);
  const int32_t target_bytes = small_or_any(in);
  const int mode = static_cast<int>(in.byte() % 9) - 3;  // -3 .. 5: both ends invalid
  const int32_t iteration = small_or_any(in);
  const uint8_t flags = in.byte();
  const bool snapshot = (flags & 1) != 0;
  const bool reverse = (flags & 2) != 0;
  FDBFuture* f = fdb_transaction_get_range(
      tr, u8(b.key), len(b.key), b.or_equal, b.offset, u8(e.key), len(e.key), e.or_equal, e.offset,
      limit, target_bytes, static_cast<FDBStreamingMode>(mode), iteration, snapshot, reverse);
  check(fdb_future_block_until_ready(f) == 0);
  const fdb_error_t error = fdb_future_get_error(f);
  const fdb_error_t expected = batch_error(limit, target_bytes, mode, iteration);
  if (expected != 0) {
    check(error == expected);
  } else if (special(b.key) || special(e.key)) {
    check(error == 0 || (error >= 2000 && error < 3000));
  } else if (beyond_keyspace(b.key) || beyond_keyspace(e.key)) {
    check(error == 2004);
  } else {
    check(error == 0);
    const FDBKeyValue* kv = nullptr;
    int count = 0;
    fdb_bool_t more = 0;
    check(fdb_future_get_keyvalue_array(f, &kv, &count, &more) == 0);
    const std::string begin = resolve(b);
    const std::string end = resolve(e);
    std::vector<std::string> rows;
    for (const std::string& k : model_keys()) {
      if (k >= begin && k < end) rows.push_back(k);
    }
    if (reverse) std::reverse(rows.begin(), rows.end());
    check(count >= 0 && static_cast<std::size_t>(count) <= rows.size());
    check(rows.empty() || count >= 1);
    if (limit > 0) check(count <= limit);
    for (int i = 0; i < count; ++i) {
      check(std::string(reinterpret_cast<const char*>(kv[i].key),
                        static_cast<std::size_t>(kv[i].key_length)) == rows[i]);
    }
    if (static_cast<std::size_t>(count) < rows.size()) check(more != 0);
    if (count == 0) check(more == 0);
  }
  fdb_future_destroy(f);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  static const int initialized = fuzz_init();
  (void)initialized;
  Input in(data, size);
  FDBTransaction* tr = nullptr;
  check(fdb_database_create_transaction(g_db, &tr) == 0);
  // A few reads per input, in one transaction: its read conflict ranges and own-write
  // cache grow as a binding's do.
  for (int reads = 1 + in.byte() % 4; reads > 0; --reads) {
    if ((in.byte() & 1) != 0) {
      fuzz_get_range(tr, in);
    } else {
      fuzz_get_key(tr, in);
    }
  }
  fdb_transaction_destroy(tr);
  return 0;
}
