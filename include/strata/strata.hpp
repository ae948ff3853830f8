// strata/strata.hpp: the whole public API.
#pragma once

#include "strata/database.hpp"
#include "strata/error.hpp"
#include "strata/transaction.hpp"
#include "strata/types.hpp"
