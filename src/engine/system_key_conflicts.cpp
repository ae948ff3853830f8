#include "engine/system_key_conflicts.hpp"

#include "base/invariant.hpp"
#include "engine/transaction_impl.hpp"

namespace strata::engine {

void SystemKeyConflicts::add_read_conflict_range(Transaction& tr, std::string_view begin,
                                                 std::string_view end) {
  STRATA_INVARIANT(tr.impl_ != nullptr);  // the C API's transactions are in-process
  tr.impl_->add_read_conflict_range(begin, end, ConflictKeys::system);
}

void SystemKeyConflicts::add_write_conflict_range(Transaction& tr, std::string_view begin,
                                                  std::string_view end) {
  STRATA_INVARIANT(tr.impl_ != nullptr);
  tr.impl_->add_write_conflict_range(begin, end, ConflictKeys::system);
}

}  // namespace strata::engine
