/* A C program as FoundationDB's C API documentation has one written: it defines
 * FDB_API_VERSION, includes <foundationdb/fdb_c.h>, runs the network on a thread of its
 * own, and sets, reads and adds to keys in retry loops. Built against strata's installed
 * header and linked with its libfdb_c.so, it runs unchanged. Prints "c program ok".
 * STRATA_TEST_NO_API_VERSION leaves FDB_API_VERSION undefined: the header must refuse. */
#ifndef STRATA_TEST_NO_API_VERSION
#define FDB_API_VERSION 740
#endif
#include <foundationdb/fdb_c.h>

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static void* run_network(void* unused) {
  (void)unused;
  fdb_error_t err = fdb_run_network();
  if (err) fprintf(stderr, "fdb_run_network: %s\n", fdb_get_error(err));
  return NULL;
}

static fdb_error_t wait_for(FDBFuture* f) {
  fdb_error_t err = fdb_future_block_until_ready(f);
  return err ? err : fdb_future_get_error(f);
}

static int failed(fdb_error_t err, const char* what) {
  if (!err) return 0;
  fprintf(stderr, "%s: %d %s\n", what, err, fdb_get_error(err));
  return 1;
}

/* Commits what `tr` holds, retrying through fdb_transaction_on_error; `write` (re)applies
   the transaction's writes before each attempt. */
static fdb_error_t commit_with_retry(FDBTransaction* tr, void (*write)(FDBTransaction*)) {
  for (;;) {
    write(tr);
    FDBFuture* commit = fdb_transaction_commit(tr);
    fdb_error_t err = wait_for(commit);
    fdb_future_destroy(commit);
    if (!err) return 0;
    FDBFuture* retry = fdb_transaction_on_error(tr, err);
    err = wait_for(retry);
    fdb_future_destroy(retry);
    if (err) return err;
  }
}

static const uint8_t kHello[] = "hello";
static const uint8_t kWorld[] = "world";
static const uint8_t kCounter[] = "counter";

static void write_hello(FDBTransaction* tr) {
  fdb_transaction_set(tr, kHello, 5, kWorld, 5);
}

static void add_five(FDBTransaction* tr) {
  const uint8_t five[8] = {5, 0, 0, 0, 0, 0, 0, 0}; /* little-endian, as the ADD mutation */
  fdb_transaction_atomic_op(tr, kCounter, 7, five, 8, FDB_MUTATION_TYPE_ADD);
}

/* Reads `key` into value[0..8), returning its length, or -1 (absent or an error). */
static int read_key(FDBTransaction* tr, const uint8_t* key, int key_length, uint8_t* value) {
  FDBFuture* get = fdb_transaction_get(tr, key, key_length, 0);
  fdb_bool_t present = 0;
  const uint8_t* bytes = NULL;
  int length = -1;
  if (!failed(wait_for(get), "get") &&
      !failed(fdb_future_get_value(get, &present, &bytes, &length), "get_value") && present &&
      length <= 8) {
    memcpy(value, bytes, (size_t)length);
  } else {
    length = -1;
  }
  fdb_future_destroy(get);
  return length;
}

int main(void) {
  pthread_t network;
  FDBDatabase* db = NULL;
  FDBTransaction* tr = NULL;
  uint8_t value[8];
  int ok = 1;

  if (failed(fdb_select_api_version(FDB_API_VERSION), "select_api_version")) return 1;
  if (failed(fdb_setup_network(), "setup_network")) return 1;
  if (pthread_create(&network, NULL, run_network, NULL) != 0) return 1;
  if (failed(fdb_create_database(NULL, &db), "create_database")) return 1;
  if (failed(fdb_database_create_transaction(db, &tr), "create_transaction")) return 1;

  ok = !failed(commit_with_retry(tr, write_hello), "commit hello");
  fdb_transaction_reset(tr);
  ok = ok && !failed(commit_with_retry(tr, add_five), "add");
  fdb_transaction_reset(tr);
  ok = ok && !failed(commit_with_retry(tr, add_five), "add again");
  fdb_transaction_reset(tr);
  ok = ok && read_key(tr, kHello, 5, value) == 5 && memcmp(value, kWorld, 5) == 0;
  ok = ok && read_key(tr, kCounter, 7, value) == 8 && value[0] == 10 && value[1] == 0;

  fdb_transaction_destroy(tr);
  fdb_database_destroy(db);
  if (failed(fdb_stop_network(), "stop_network")) return 1;
  pthread_join(network, NULL);
  if (!ok) {
    fprintf(stderr, "the values read back are not the ones written\n");
    return 1;
  }
  printf("c program ok\n");
  return 0;
}
