/* Calls into libapairs after the calling thread's C++ thread_local objects are gone: from
 * an atexit handler (the main thread's are destroyed before the handlers run) and from a
 * pthread key destructor (a thread's are destroyed before its keys' destructors). Both
 * follow a failure whose message the library kept, and make a failing call and a
 * succeeding one: each status and message must be right. (With the message in a
 * thread_local std::string, the handler wrote into freed memory: glibc aborted, or
 * AddressSanitizer reported a heap-use-after-free.) Exit 0 on success, 1 on a wrong
 * answer. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "apairs.h"

static apairs_context_t ctx;
static pthread_key_t key;

/* An unknown metric: INVALID_VALUE or UNKNOWN_ENUM, with a message naming the function. */
static int failing_call(const char *where) {
    apairs_plan_t plan = NULL;
    const apairs_status_t s =
        apairs_plan_create_pairwise(&plan, ctx, 99, 0, APAIRS_DTYPE_F64, 1, 1, 1, 1, 1, 1);
    const char *msg = apairs_last_error();
    if (s == APAIRS_SUCCESS || plan != NULL || strstr(msg, "apairs_plan_create_pairwise") == NULL) {
        fprintf(stderr, "%s: status %d, message \"%s\"\n", where, (int)s, msg);
        return 1;
    }
    return 0;
}

static int succeeding_call(const char *where) {
    int32_t count = -1;
    const apairs_status_t s = apairs_cuda_device_count(&count);
    if (s != APAIRS_SUCCESS || count < 0 || apairs_last_error()[0] != '\0') {
        fprintf(stderr, "%s: status %d, count %d, message \"%s\"\n", where, (int)s, (int)count,
                apairs_last_error());
        return 1;
    }
    return 0;
}

static void at_exit(void) {
    const int bad = failing_call("atexit") | succeeding_call("atexit");
    apairs_context_destroy(ctx);
    if (bad) _exit(1);
}

static void key_destructor(void *value) {
    (void)value;
    if (failing_call("key destructor") | succeeding_call("key destructor")) _exit(1);
}

static void *thread_body(void *arg) {
    (void)arg;
    pthread_setspecific(key, &key);
    return failing_call("thread") ? (void *)1 : NULL;
}

int main(void) {
    if (apairs_context_create(&ctx, APAIRS_BACKEND_HOST, 0) != APAIRS_SUCCESS) return 1;
    if (pthread_key_create(&key, key_destructor) != 0) return 1;
    pthread_t t;
    void *result = NULL;
    if (pthread_create(&t, NULL, thread_body, NULL) != 0 || pthread_join(t, &result) != 0 || result != NULL)
        return 1;
    if (failing_call("main")) return 1;
    if (atexit(at_exit) != 0) return 1;
    return 0;
}
