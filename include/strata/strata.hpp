// strata/strata.hpp: the whole public API.
#pragma once

#include "strata/database.hpp"
#include "strata/error.hpp"
#include "strata/priority_queue.hpp"
#include "strata/queue.hpp"
#include "strata/subspace.hpp"
#include "strata/transaction.hpp"
#include "strata/tuple.hpp"
#include "strata/types.hpp"
#include "strata/version.hpp"
