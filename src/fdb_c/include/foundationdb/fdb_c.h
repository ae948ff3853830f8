/* foundationdb/fdb_c.h: the header a C program compiles against to use strata's
 * libfdb_c.so, as it would FoundationDB's: the program defines FDB_API_VERSION (the API
 * version it is written for, 620 to 740 here) before including it, and selects that
 * version at run time with fdb_select_api_version(FDB_API_VERSION).
 *
 * The declarations are strata's (strata_fdb_c.h, installed beside this file),
 * ABI-compatible with FoundationDB 7.4's. A program built from FoundationDB's
 * documentation compiles unchanged; linked with FoundationDB's own libfdb_c.so instead,
 * it runs on a cluster. The named option codes are the ones strata acts on; FoundationDB's
 * other codes are accepted by number and ignored (docs/fdb_c.md).
 */
#ifndef STRATA_FOUNDATIONDB_FDB_C_H
#define STRATA_FOUNDATIONDB_FDB_C_H

#ifndef FDB_API_VERSION
#error "define FDB_API_VERSION (at most 740) before including foundationdb/fdb_c.h"
#endif
#if FDB_API_VERSION > 740
#error "strata's libfdb_c.so provides API versions up to 740"
#endif
#if FDB_API_VERSION < 620
#error "strata's libfdb_c.so compiles against header API versions 620 and later"
#endif

#include "strata_fdb_c.h"

/* As FoundationDB's header: the runtime version the program asks for, checked against the
   version this header was compiled with. */
#define fdb_select_api_version(v) fdb_select_api_version_impl(v, FDB_API_VERSION)

#endif /* STRATA_FOUNDATIONDB_FDB_C_H */
