/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tide-preload-pyalloc.c: Python objects, through CPython's allocator API.
 *
 * CPython carves its objects out of arenas of its own (pymalloc), each
 * mapped in one piece, so the malloc and mmap hooks see an arena made by
 * whichever line happened to need a new one, and none of the objects.
 * Here the object and mem domains (PyMem_SetAllocator) are wrapped, each
 * chaining to the allocator that was there (pymalloc, the debug hooks, or
 * malloc under PYTHONMALLOC=malloc): an object then goes through the same
 * byte sampler as a malloc block, with its Python frames, as kind
 * TIDE_KIND_PYOBJECT.  The chained call is a real call (guard raised): a
 * large object that pymalloc passes on to malloc, or every object under
 * PYTHONMALLOC=malloc, is not counted a second time by the malloc hook.
 * While pymalloc itself is the allocator, in sampled mode, the wrappers
 * are those of tide-preload-pymalloc.c instead, which leave the free to
 * pymalloc.
 *
 * The arena allocator (PyObject_SetArenaAllocator) is wrapped too, at
 * start-up, before the interpreter makes its first arena: arenas are sent
 * as TIDE_KIND_PYARENA, without a stack, and the mmap hook does not see
 * them.  The recorder counts them as a class of their own and never as a
 * stack's bytes, since the objects in them already are.
 *
 * The domains are wrapped by the tidemark package at start-up (the GIL is
 * held; CPython allows a hook that calls the previous allocator to be set
 * after initialization), before the program's code runs, and never while
 * tracemalloc traces: tracemalloc.stop() puts back the allocators it found,
 * which would drop ours from under objects we sampled.  A later
 * tracemalloc.start() wraps ours, which is as CPython means hooks to chain.
 *
 * Objects made before the hooks are never recorded: the bytes of pymalloc's
 * blocks in use then are read once, from the allocator's own statistics
 * (_PyObject_DebugMallocStats, the text of sys._debugmallocstats(), which
 * CPython prints only while pymalloc is the allocator, so before ours is
 * set), and sent, so that the recorder counts them as used when it tells
 * what the arenas hold free (capture/core/tide-pymalloc-free.h).
 *
 * The C API is looked up at run time: the preload never links libpython.
 * The structures below are those of CPython's cpython/pymem.h, unchanged
 * from 3.5 to 3.13.
 */
#include "config.h"

#include "tide-preload-private.h"
#include "tide-preload-pyalloc.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* PyMemAllocatorDomain */
enum
{
  TIDE_PY_DOMAIN_MEM = 1,
  TIDE_PY_DOMAIN_OBJ = 2,
  TIDE_PY_N_DOMAINS  = 3,
};

typedef struct
{
  void  *ctx;
  void *(*alloc) (void *ctx, size_t size);
  void  (*free)  (void *ctx, void *ptr, size_t size);
} TidePyArenaAllocator;

/* The allocators we chain to; each domain's wrapper gets its own as ctx. */
static TidePyMemAllocator tide_pyalloc_prev[TIDE_PY_N_DOMAINS];
static TidePyArenaAllocator tide_pyarena_prev;
static bool tide_pyalloc_domains_hooked;
static bool tide_pyalloc_arenas_hooked;

/* ---- the object and mem domains ------------------------------------------- */

/* Every call of the chained allocator is a real call: it may be malloc, or
 * pass a request on to malloc, and the malloc hook must not count the same
 * object a second time. */
static void *
pyalloc_malloc (void   *ctx,
                size_t  size)
{
  const TidePyMemAllocator *prev = ctx;
  double weight = tide_should_sample (size) ? tide_sample_decide (size) : 0.0;
  void *p;

  TIDE_REAL_CALL (p = prev->malloc (prev->ctx, size));
  if (weight > 0.0 && p != NULL)
    tide_record_alloc (p, size, weight, TIDE_KIND_PYOBJECT);
  return p;
}

static void *
pyalloc_calloc (void   *ctx,
                size_t  nelem,
                size_t  elsize)
{
  const TidePyMemAllocator *prev = ctx;
  size_t total;
  bool overflow = __builtin_mul_overflow (nelem, elsize, &total);
  double weight = !overflow && tide_should_sample (total) ? tide_sample_decide (total) : 0.0;
  void *p;

  TIDE_REAL_CALL (p = prev->calloc (prev->ctx, nelem, elsize));
  if (weight > 0.0 && p != NULL)
    tide_record_alloc (p, total, weight, TIDE_KIND_PYOBJECT);
  return p;
}

static void *
call_chained_realloc (void   *ctx,
                      void   *ptr,
                      size_t  nmemb,
                      size_t  size)
{
  const TidePyMemAllocator *prev = ctx;
  void *p;

  TIDE_REAL_CALL (p = prev->realloc (prev->ctx, ptr, size));
  return p;
}

static void *
pyalloc_realloc (void   *ctx,
                 void   *ptr,
                 size_t  size)
{
  return tide_realloc_tracked (ptr, size, TIDE_KIND_PYOBJECT, call_chained_realloc, ctx, 1);
}

/* The free of a block whose free may have to be recorded: out of line, so
 * that the common free keeps no frame of its own.  The chained free runs
 * under the guard: a block that it hands on to free() (one that pymalloc
 * did not serve, or every object under PYTHONMALLOC=malloc) has had its
 * free recorded here, and with every free recorded (--all) the free hook
 * would record it again, as the free of a block that no longer exists. */
static __attribute__ ((noinline)) void
pyalloc_free_looked_up (const TidePyMemAllocator *prev,
                        void                     *ptr)
{
  tide_maybe_record_free (ptr, TIDE_KIND_PYOBJECT);
  TIDE_REAL_CALL (prev->free (prev->ctx, ptr));
}

/* The common free: one load of the free mode and one of the filter, then
 * a tail call.  A free that the filter passes needs no guard: the block is
 * not in the set, and the free hook's own filter says so too. */
static void
pyalloc_free (void *ctx,
              void *ptr)
{
  const TidePyMemAllocator *prev = ctx;

  if (TIDE_UNLIKELY (ptr != NULL && tide_free_may_record (ptr)))
    pyalloc_free_looked_up (prev, ptr);
  else
    prev->free (prev->ctx, ptr);
}

/* The number after "# bytes in allocated blocks ... =", its digits grouped
 * by commas ("2,081,136"), as every CPython from 3.3 prints it. */
static bool
parse_allocated_bytes (const char *stats,
                       int64_t    *bytes)
{
  const char *p = strstr (stats, "# bytes in allocated blocks");
  int64_t value = 0;
  bool digits = false;

  if (p == NULL || (p = strchr (p, '=')) == NULL)
    return false;
  for (p++; *p != '\0' && *p != '\n'; p++)
    {
      if (*p >= '0' && *p <= '9')
        {
          value = value * 10 + (*p - '0');
          digits = true;
        }
      else if (*p != ',' && *p != ' ')
        return false;
    }
  *bytes = value;
  return digits;
}

/* pymalloc's bytes in use, sent as TIDE_WIRE_COUNTER_PY_UNHOOKED; nothing
 * where pymalloc is not the allocator (PYTHONMALLOC=malloc), or is not the
 * one ours will chain to: pymalloc's own table has no context, and the
 * debug hooks (-X dev, PYTHONMALLOC=pymalloc_debug), which add bytes to
 * every block, have one.  The GIL is held: the statistics walk the
 * arenas.  Returns whether pymalloc is the object domain's allocator: its
 * statistics are printed only then (3.13's mimalloc prints others). */
static bool
send_unhooked_bytes (void (*get_allocator) (int, TidePyMemAllocator *))
{
  int (*malloc_stats) (FILE *);
  TidePyMemAllocator current;
  char *text = NULL;
  size_t len = 0;
  int64_t bytes = 0;
  bool parsed = false;
  FILE *out;

  get_allocator (TIDE_PY_DOMAIN_OBJ, &current);
  *(void **) &malloc_stats = dlsym (RTLD_DEFAULT, "_PyObject_DebugMallocStats");
  if (malloc_stats == NULL || current.ctx != NULL)
    return false;
  tide_tls.guard++;
  if ((out = open_memstream (&text, &len)) != NULL)
    {
      int printed = malloc_stats (out);

      if (fclose (out) == 0 && printed && text != NULL)
        parsed = parse_allocated_bytes (text, &bytes);
    }
  free (text);
  tide_tls.guard--;
  if (parsed)
    tidemark_preload_counter (TIDE_WIRE_COUNTER_PY_UNHOOKED, -1, bytes);
  return parsed;
}

/* Whether @table is pymalloc's own, as that of the object domain is when
 * @pymalloc says so: the same functions, and no context. */
static bool
is_pymalloc (const TidePyMemAllocator *table,
             const TidePyMemAllocator *object,
             bool                      pymalloc)
{
  return pymalloc && table->ctx == NULL && table->malloc == object->malloc
         && table->calloc == object->calloc && table->realloc == object->realloc
         && table->free == object->free;
}

/* Called by the tidemark package (ctypes.PyDLL: the GIL is held) once per
 * process, before the program's code runs.  Returns 1 when the domains are
 * wrapped now. */
TIDE_EXPORT int
tidemark_preload_python_hook_allocators (void)
{
  void (*get_allocator) (int, TidePyMemAllocator *);
  void (*set_allocator) (int, TidePyMemAllocator *);
  static const int domains[] = { TIDE_PY_DOMAIN_OBJ, TIDE_PY_DOMAIN_MEM };
  const TidePyMemAllocator *object = &tide_pyalloc_prev[TIDE_PY_DOMAIN_OBJ];
  bool pymalloc;
  int saved = errno;

  if (tide_pyalloc_domains_hooked)
    return 1;
  if (!tide_active ())
    return 0;
  /* A libpython loaded after start-up (an embedding program) gets its
   * arenas wrapped now; those it made before are recorded mappings. */
  tide_pyalloc_hook_arenas ();
  *(void **) &get_allocator = dlsym (RTLD_DEFAULT, "PyMem_GetAllocator");
  *(void **) &set_allocator = dlsym (RTLD_DEFAULT, "PyMem_SetAllocator");
  if (get_allocator == NULL || set_allocator == NULL)
    return 0;
  pymalloc = send_unhooked_bytes (get_allocator);
  for (size_t i = 0; i < sizeof domains / sizeof domains[0]; i++)
    {
      TidePyMemAllocator *prev = &tide_pyalloc_prev[domains[i]];
      TidePyMemAllocator ours = {
        .ctx = prev, .malloc = pyalloc_malloc, .calloc = pyalloc_calloc,
        .realloc = pyalloc_realloc, .free = pyalloc_free,
      };

      get_allocator (domains[i], prev);
      /* The mem domain is pymalloc too when it has the object domain's
       * table (as it has by default). */
      if (is_pymalloc (prev, object, pymalloc) && !tide_state.all)
        tide_pymalloc_wrappers (prev, &ours);
      set_allocator (domains[i], &ours);
    }
  tide_pyalloc_domains_hooked = true;
  errno = saved;
  return 1;
}

/* ---- the arenas ------------------------------------------------------------ */

static void *
pyarena_alloc (void   *ctx,
               size_t  size)
{
  void *p;

  TIDE_REAL_CALL (p = tide_pyarena_prev.alloc (tide_pyarena_prev.ctx, size));
  if (p != NULL)
    tide_record_alloc (p, size, 1.0, TIDE_KIND_PYARENA);
  return p;
}

static void
pyarena_free (void   *ctx,
              void   *ptr,
              size_t  size)
{
  /* An arena made before the wrapper was set is a recorded mapping. */
  if (ptr != NULL && !tide_record_free_if_sampled (ptr, TIDE_KIND_PYARENA, NULL))
    tide_record_free_if_sampled (ptr, TIDE_KIND_MMAP, NULL);
  TIDE_REAL_CALL (tide_pyarena_prev.free (tide_pyarena_prev.ctx, ptr, size));
}

/* At start-up, in a program that has CPython in it: setting the arena
 * allocator only stores it, which is safe before the interpreter starts,
 * and after it (arenas made before are freed through ours, which chains). */
void
tide_pyalloc_hook_arenas (void)
{
  void (*get_arena) (TidePyArenaAllocator *);
  void (*set_arena) (TidePyArenaAllocator *);
  TidePyArenaAllocator ours = { .alloc = pyarena_alloc, .free = pyarena_free };

  if (tide_pyalloc_arenas_hooked)
    return;
  *(void **) &get_arena = dlsym (RTLD_DEFAULT, "PyObject_GetArenaAllocator");
  *(void **) &set_arena = dlsym (RTLD_DEFAULT, "PyObject_SetArenaAllocator");
  if (get_arena == NULL || set_arena == NULL)
    return;
  get_arena (&tide_pyarena_prev);
  if (tide_pyarena_prev.alloc == NULL || tide_pyarena_prev.free == NULL)
    return;
  set_arena (&ours);
  tide_pyalloc_arenas_hooked = true;
}
