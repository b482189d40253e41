/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * dlsym, for the CUDA driver functions that no symbol lookup of ours sees.
 *
 * The CUDA runtime and PyTorch open libcuda with dlopen and take its
 * functions with dlsym on that handle, cuGetProcAddress_v2 first; the
 * dynamic linker never routes those through our exported hooks.  So dlsym
 * on an explicit handle is wrapped: a tracked driver function comes back as
 * our wrapper, which remembers the real one (tide_cuda_wrap_symbol).
 *
 * dlsym(RTLD_NEXT) must not be wrapped at all: glibc finds "next" from the
 * caller's return address, which a C wrapper would replace by ours.  An
 * x86-64 trampoline sends RTLD_NEXT straight to the real dlsym with the
 * caller's return address still on the stack, as the dlopen hook does.
 * Elsewhere dlsym is not hooked.
 */
#include "config.h"

#include <dlfcn.h>
#include <stdatomic.h>
#include <stdint.h>

#include "tide-preload-cuda.h"
#include "tide-preload-objects.h"
#include "tide-preload-private.h"

#if defined(__x86_64__)

typedef void *(*DlsymFn) (void *, const char *);

/* The real dlsym, read by the trampoline; NULL until first needed. */
void *tide_dlsym_next;

void *tide_dlsym_fallback (void *handle, const char *symbol) __attribute__ ((used));
void *tide_dlsym_explicit (void *handle, const char *symbol) __attribute__ ((used));

__asm__ (".text\n"
         ".globl dlsym\n"
         ".type dlsym, @function\n"
         "dlsym:\n"
         "  movq tide_dlsym_next(%rip), %rax\n"
         "  testq %rax, %rax\n"
         "  je tide_dlsym_fallback\n"
         "  cmpq $-1, %rdi\n"                 /* RTLD_NEXT */
         "  jne tide_dlsym_explicit\n"
         "  jmp *%rax\n"
         ".size dlsym, .-dlsym\n");

static DlsymFn
real_dlsym (void)
{
  void *fn = atomic_load_explicit ((_Atomic (void *) *) &tide_dlsym_next,
                                   memory_order_acquire);

  if (fn == NULL)
    {
      /* dlvsym is not hooked; the default version first, then the old one. */
      fn = dlvsym (RTLD_NEXT, "dlsym", "GLIBC_2.34");
      if (fn == NULL)
        fn = dlvsym (RTLD_NEXT, "dlsym", "GLIBC_2.2.5");
      atomic_store_explicit ((_Atomic (void *) *) &tide_dlsym_next, fn, memory_order_release);
    }
  return (DlsymFn) fn;
}

/* Before the real dlsym is known; only our own start-up gets here, and for
 * RTLD_NEXT its caller is this library, which is then right. */
void *
tide_dlsym_fallback (void       *handle,
                     const char *symbol)
{
  DlsymFn real = real_dlsym ();

  if (real == NULL)
    return NULL;
  return handle == RTLD_NEXT ? real (handle, symbol) : tide_dlsym_explicit (handle, symbol);
}

void *
tide_dlsym_explicit (void       *handle,
                     const char *symbol)
{
  DlsymFn real = real_dlsym ();
  void *fn = real != NULL ? real (handle, symbol) : NULL;

  /* Our own lookups of the real functions (guard raised) stay unwrapped. */
  if (fn == NULL || symbol == NULL || symbol[0] != 'c' || symbol[1] != 'u' ||
      tide_tls.guard != 0 || tide_objects_is_self ((uintptr_t) fn))
    return fn;
  return tide_cuda_wrap_symbol (symbol, fn);
}

#endif
