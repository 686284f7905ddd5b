// Clang thread-safety annotations (checked with -Wthread-safety in the clang CI build).
#pragma once

#if defined(__clang__)
#define KSCHED_TSA(x) __attribute__((x))
#else
#define KSCHED_TSA(x)
#endif

#define GUARDED_BY(x) KSCHED_TSA(guarded_by(x))
#define PT_GUARDED_BY(x) KSCHED_TSA(pt_guarded_by(x))
#define REQUIRES(...) KSCHED_TSA(requires_capability(__VA_ARGS__))
#define EXCLUDES(...) KSCHED_TSA(locks_excluded(__VA_ARGS__))
#define CAPABILITY(x) KSCHED_TSA(capability(x))
#define ACQUIRE(...) KSCHED_TSA(acquire_capability(__VA_ARGS__))
#define RELEASE(...) KSCHED_TSA(release_capability(__VA_ARGS__))
#define ACQUIRE_SHARED(...) KSCHED_TSA(acquire_shared_capability(__VA_ARGS__))
#define RELEASE_SHARED(...) KSCHED_TSA(release_shared_capability(__VA_ARGS__))
#define RELEASE_GENERIC(...) KSCHED_TSA(release_generic_capability(__VA_ARGS__))
#define REQUIRES_SHARED(...) KSCHED_TSA(requires_shared_capability(__VA_ARGS__))
#define SCOPED_CAPABILITY KSCHED_TSA(scoped_lockable)
#define NO_THREAD_SAFETY_ANALYSIS KSCHED_TSA(no_thread_safety_analysis)
