/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tide-preload-python.c: the Python frames of recorded allocations.
 *
 * Reading Python frames from inside a malloc hook is where profilers crash:
 * on 3.11+ PyEval_GetFrame and PyFrame_GetBack create frame objects on
 * demand (an allocation, possibly a garbage collection, inside malloc), and
 * PyTorch releases the GIL in nearly every operator, so "only when the GIL
 * is held" would miss the allocations that matter.  Instead each thread
 * keeps a shadow stack, maintained by a C profile function
 * (PyEval_SetProfile) that the tidemark package installs on every thread:
 * on "call" it pushes (frame object, code id, C stack pointer), on "return"
 * it pops.  The hook then reads only its own thread's shadow stack, and asks
 * each frame for its line with PyFrame_GetLineNumber, which reads the frame
 * and the code object's line table and never allocates.  Those frames belong
 * to the calling thread and are suspended under it, so no lock and no GIL is
 * needed to read them: nothing else runs or frees them until this thread
 * returns from malloc.
 *
 * Everything that allocates or may raise (naming a code object, the
 * PYFRAME_DEF) happens in the profile function, with the GIL held and the
 * hooks' guard raised.  Code objects are kept alive once named, so an id
 * never changes meaning.
 *
 * When something else replaces our profile function (cProfile,
 * sys.setprofile) the shadow stack would go stale: the profile object we
 * install is a capsule whose destructor marks this thread's slot invalid,
 * and a stale stack is never read.
 *
 * Where Python frames go: each C-level call of _PyEval_EvalFrameDefault runs
 * one or more Python frames (3.11+ runs Python-to-Python calls inline).  The
 * profile function is called from inside the evaluation loop, so the frames
 * one C evaluation runs share the C stack pointer seen at "call": grouped by
 * it, the k-th group from the inside replaces the k-th evaluation frame from
 * the inside in the native stack.
 *
 * Versions: written for CPython 3.8 to 3.13 (3.8 reads f_code at its public
 * offset, as it lacks PyFrame_GetCode); verified on Debian's 3.11.  Other
 * versions are refused at attach time: no Python frames, native stacks only.
 */
#include "config.h"

#include "tide-preload-python.h"

#include "tide-preload-buffer.h"
#include "tide-preload-private.h"
#include "tide-preload-raw.h"
#include "tide-hash.h"

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define TIDE_PY_MAX_DEPTH    256
#define TIDE_PY_SLOTS        65536u
#define TIDE_PY_TABLE_MIN    4096u
#define TIDE_PY_DEF_SLAB     (1u << 20)
#define TIDE_PY_CAPSULE_NAME "tidemark.profile"

/* PyTrace_* values, stable since 2.x. */
enum
{
  TIDE_PY_TRACE_CALL = 0,
  TIDE_PY_TRACE_RETURN = 3,
};

typedef int  (*TidePyTraceFunc) (void *obj, void *frame, int what, void *arg);
typedef void (*TidePyCapsuleDestructor) (void *capsule);

typedef struct
{
  void        (*set_profile) (TidePyTraceFunc, void *);
  int         (*frame_line) (void *);
  void       *(*frame_code) (void *);   /* new reference; NULL before 3.9 */
  void       *(*frame_back) (void *);   /* new reference; NULL before 3.9 */
  void       *(*get_frame) (void);      /* borrowed */
  void       *(*get_attr) (void *, const char *);
  const char *(*as_utf8) (void *);
  long        (*as_long) (void *);
  void        (*decref) (void *);
  void        (*incref) (void *);
  void        (*err_clear) (void);
  void       *(*capsule_new) (void *, const char *, TidePyCapsuleDestructor);
  void       *(*capsule_pointer) (void *, const char *);
  uintptr_t     eval_start;
  uintptr_t     eval_end;
  bool          ok;
  bool          tried;
} TidePyApi;

typedef struct
{
  void     *frame;      /* borrowed: alive from its "call" to its "return" */
  uintptr_t sp;         /* C stack at "call"; 0: found by attach's walk */
  uint32_t  code_id;
  uint32_t  reserved;
} TidePyEntry;

typedef struct
{
  _Atomic int valid;
} TidePySlot;

typedef struct
{
  TidePySlot *slot;     /* NULL: never attached */
  uint32_t    depth;    /* may exceed TIDE_PY_MAX_DEPTH: counted only */
  TidePyEntry entries[TIDE_PY_MAX_DEPTH];
} TidePyThread;

typedef struct
{
  void     *code;
  uint32_t  id;
  uint32_t  reserved;
} TidePyCode;

typedef struct _TidePyDef TidePyDef;

struct _TidePyDef
{
  TidePyDef *next;
  uint32_t   len;
  uint32_t   reserved;
  unsigned char rec[];  /* the PYFRAME_DEF record as sent */
};

static TidePyApi tide_py;
static __thread TidePyThread tide_py_tls __attribute__ ((tls_model ("initial-exec")));

/* Written only with the GIL held (attach and the profile function). */
static TidePySlot *tide_py_slots;
static _Atomic uint32_t tide_py_next_slot;
static TidePyCode *tide_py_table;
static uint32_t tide_py_table_cap;
static uint32_t tide_py_table_used;
static uint32_t tide_py_next_id = 1;
static pthread_mutex_t tide_py_def_lock = PTHREAD_MUTEX_INITIALIZER;
static TidePyDef *tide_py_defs;
static TidePyDef **tide_py_defs_tail = &tide_py_defs;
static unsigned char *tide_py_slab;
static size_t tide_py_slab_left;

/* ---- the C API, found at run time ------------------------------------------ */

static bool
py_version_supported (void)
{
  const char *(*get_version) (void);
  const char *v;
  char *end;
  long major, minor;

  *(void **) &get_version = dlsym (RTLD_DEFAULT, "Py_GetVersion");
  if (get_version == NULL || (v = get_version ()) == NULL)
    return false;
  major = strtol (v, &end, 10);
  if (*end != '.')
    return false;
  minor = strtol (end + 1, NULL, 10);
  return major == 3 && minor >= 8 && minor <= 13;
}

static void
py_find_eval_frame (void)
{
  void *eval = dlsym (RTLD_DEFAULT, "_PyEval_EvalFrameDefault");
  const ElfW(Sym) *sym = NULL;
  Dl_info info;

  if (eval == NULL || dladdr1 (eval, &info, (void **) &sym, RTLD_DL_SYMENT) == 0 || sym == NULL)
    return;
  tide_py.eval_start = (uintptr_t) eval;
  tide_py.eval_end = (uintptr_t) eval + sym->st_size;
}

#define PY_SYM(field, name) (*(void **) &tide_py.field = dlsym (RTLD_DEFAULT, name))

static bool
py_resolve (void)
{
  if (tide_py.tried)
    return tide_py.ok;
  tide_py.tried = true;
  if (!py_version_supported ())
    return false;
  PY_SYM (set_profile, "PyEval_SetProfile");
  PY_SYM (frame_line, "PyFrame_GetLineNumber");
  PY_SYM (frame_code, "PyFrame_GetCode");
  PY_SYM (frame_back, "PyFrame_GetBack");
  PY_SYM (get_frame, "PyEval_GetFrame");
  PY_SYM (get_attr, "PyObject_GetAttrString");
  PY_SYM (as_utf8, "PyUnicode_AsUTF8");
  PY_SYM (as_long, "PyLong_AsLong");
  PY_SYM (decref, "Py_DecRef");
  PY_SYM (incref, "Py_IncRef");
  PY_SYM (err_clear, "PyErr_Clear");
  PY_SYM (capsule_new, "PyCapsule_New");
  PY_SYM (capsule_pointer, "PyCapsule_GetPointer");
  py_find_eval_frame ();
  tide_py.ok = tide_py.set_profile && tide_py.frame_line && tide_py.get_frame
               && tide_py.get_attr && tide_py.as_utf8 && tide_py.as_long && tide_py.decref
               && tide_py.incref && tide_py.err_clear && tide_py.capsule_new
               && tide_py.capsule_pointer;
  tide_py_slots = tide_py.ok ? tide_raw_mmap (TIDE_PY_SLOTS * sizeof (TidePySlot)) : NULL;
  tide_py.ok = tide_py.ok && tide_py_slots != NULL;
  return tide_py.ok;
}

/* Borrowed.  3.8 has no PyFrame_GetCode; f_code follows PyObject_VAR_HEAD
 * and f_back in its public PyFrameObject. */
static void *
py_frame_code (void *frame)
{
  void *code;

  if (tide_py.frame_code == NULL)
    return *(void **) ((char *) frame + 3 * sizeof (void *) + sizeof (void *));
  code = tide_py.frame_code (frame);
  if (code != NULL)
    tide_py.decref (code);  /* the frame holds it as long as we use it */
  return code;
}

/* ---- code objects ----------------------------------------------------------- */

static char *
py_attr_utf8 (void       *obj,
              const char *name,
              void      **keep)
{
  void *value = tide_py.get_attr (obj, name);
  const char *s;

  *keep = value;
  if (value == NULL)
    {
      tide_py.err_clear ();
      return NULL;
    }
  s = tide_py.as_utf8 (value);
  if (s == NULL)
    tide_py.err_clear ();
  return (char *) s;
}

static long
py_attr_long (void       *obj,
              const char *name)
{
  void *value = tide_py.get_attr (obj, name);
  long v;

  if (value == NULL)
    {
      tide_py.err_clear ();
      return 0;
    }
  v = tide_py.as_long (value);
  tide_py.decref (value);
  if (v == -1)
    tide_py.err_clear ();
  return v;
}

static TidePyDef *
py_def_new (uint32_t len)
{
  size_t need = (sizeof (TidePyDef) + len + 7) & ~(size_t) 7;
  TidePyDef *def;

  if (need > tide_py_slab_left)
    {
      tide_py_slab = tide_raw_mmap (TIDE_PY_DEF_SLAB);
      tide_py_slab_left = tide_py_slab != NULL ? TIDE_PY_DEF_SLAB : 0;
      if (need > tide_py_slab_left)
        return NULL;
    }
  def = (TidePyDef *) tide_py_slab;
  tide_py_slab += need;
  tide_py_slab_left -= need;
  def->next = NULL;
  def->len = len;
  return def;
}

static uint32_t
py_encode_def (unsigned char *rec,
               uint32_t       cap,
               uint32_t       id,
               long           first_line,
               const char    *file,
               const char    *function)
{
  TideWirePyFrameDef *r = (TideWirePyFrameDef *) rec;
  size_t nf = strnlen (file, TIDE_WIRE_MAX_STRING / 2 - 1);
  size_t nn = strnlen (function, TIDE_WIRE_MAX_STRING / 2 - 1);
  uint32_t len = tide_wire_align ((uint32_t) (sizeof *r + nf + 1 + nn + 1));
  TideStamp st = tide_stamp ();

  if (len > cap)
    return 0;
  memset (rec, 0, len);
  r->h = (TideWireHeader) { .type = TIDE_WIRE_PYFRAME_DEF, .len = (uint16_t) len,
                            .tid = st.tid, .time_ns = st.time_ns };
  r->id = id;
  r->first_line = (int32_t) first_line;
  r->file_len = (uint32_t) nf;
  memcpy (r->strings, file, nf);
  memcpy (r->strings + nf + 1, function, nn);
  return len;
}

/* Names a code object: one PYFRAME_DEF, kept for the resend after a fork. */
static void
py_announce (void    *code,
             uint32_t id)
{
  _Alignas (8) unsigned char rec[sizeof (TideWirePyFrameDef) + TIDE_WIRE_MAX_STRING];
  void *file_obj, *name_obj;
  const char *file = py_attr_utf8 (code, "co_filename", &file_obj);
  const char *name = py_attr_utf8 (code, "co_qualname", &name_obj);
  uint32_t len;
  TidePyDef *def;

  if (name_obj == NULL)
    name = py_attr_utf8 (code, "co_name", &name_obj);
  len = py_encode_def (rec, sizeof rec, id, py_attr_long (code, "co_firstlineno"),
                       file ? file : "?", name ? name : "?");
  if (file_obj != NULL)
    tide_py.decref (file_obj);
  if (name_obj != NULL)
    tide_py.decref (name_obj);
  pthread_mutex_lock (&tide_py_def_lock);
  if (len > 0 && (def = py_def_new (len)) != NULL)
    {
      memcpy (def->rec, rec, len);
      *tide_py_defs_tail = def;
      tide_py_defs_tail = &def->next;
    }
  pthread_mutex_unlock (&tide_py_def_lock);
  if (len > 0)
    tide_send_direct (rec, len);
}

/* Where a code object's probe starts in a table of @cap slots (a power
 * of two): objects are 16-byte aligned and close together, so every bit
 * of the address is mixed into the index. */
static inline uint32_t
py_code_slot (const void *code,
              uint32_t    cap)
{
  return (uint32_t) tide_hash_u64 ((uintptr_t) code) & (cap - 1);
}

static bool
py_table_grow (void)
{
  uint32_t cap = tide_py_table_cap ? tide_py_table_cap * 2 : TIDE_PY_TABLE_MIN;
  TidePyCode *table = tide_raw_mmap (cap * sizeof (TidePyCode));

  if (table == NULL)
    return false;
  for (uint32_t i = 0; i < tide_py_table_cap; i++)
    {
      TidePyCode *old = &tide_py_table[i];
      uint32_t j = py_code_slot (old->code, cap);

      if (old->code == NULL)
        continue;
      while (table[j].code != NULL)
        j = (j + 1) & (cap - 1);
      table[j] = *old;
    }
  tide_raw_munmap (tide_py_table, tide_py_table_cap * sizeof (TidePyCode));
  tide_py_table = table;
  tide_py_table_cap = cap;
  return true;
}

/* The id of a code object, named on first sight.  GIL held. */
static uint32_t
py_code_id (void *code)
{
  uint32_t i;

  if (code == NULL)
    return 0;
  if (tide_py_table_used * 2 >= tide_py_table_cap && !py_table_grow ())
    return 0;
  i = py_code_slot (code, tide_py_table_cap);
  while (tide_py_table[i].code != NULL)
    {
      if (tide_py_table[i].code == code)
        return tide_py_table[i].id;
      i = (i + 1) & (tide_py_table_cap - 1);
    }
  tide_py.incref (code);  /* an id never changes meaning */
  tide_py_table[i] = (TidePyCode) { .code = code, .id = tide_py_next_id++ };
  tide_py_table_used++;
  tide_tls.guard++;
  py_announce (code, tide_py_table[i].id);
  tide_tls.guard--;
  return tide_py_table[i].id;
}

/* ---- the shadow stack --------------------------------------------------------- */

static void
py_push (void     *frame,
         uintptr_t sp)
{
  TidePyThread *t = &tide_py_tls;
  uint32_t depth = t->depth;

  t->depth = depth + 1;
  if (depth >= TIDE_PY_MAX_DEPTH)
    return;
  t->entries[depth] = (TidePyEntry) { .frame = frame, .sp = sp,
                                      .code_id = py_code_id (py_frame_code (frame)) };
}

/* A "return" of a frame we never saw called (it was running before the
 * attach) is ignored; one below the top means returns were missed. */
static void
py_pop (void *frame)
{
  TidePyThread *t = &tide_py_tls;
  uint32_t depth = t->depth;

  if (depth == 0)
    return;
  if (depth > TIDE_PY_MAX_DEPTH)
    {
      t->depth = depth - 1;
      return;
    }
  for (uint32_t i = depth; i-- > 0;)
    if (t->entries[i].frame == frame)
      {
        t->depth = i;
        return;
      }
}

static int
py_profile (void *obj,
            void *frame,
            int   what,
            void *arg)
{
  int saved;

  if (what != TIDE_PY_TRACE_CALL && what != TIDE_PY_TRACE_RETURN)
    return 0;
  saved = errno;
  if (what == TIDE_PY_TRACE_CALL)
    py_push (frame, (uintptr_t) __builtin_frame_address (0));
  else
    py_pop (frame);
  errno = saved;
  return 0;
}

static void
py_capsule_destroyed (void *capsule)
{
  TidePySlot *slot = tide_py.capsule_pointer (capsule, TIDE_PY_CAPSULE_NAME);

  if (slot != NULL)
    atomic_store (&slot->valid, 0);
  else
    tide_py.err_clear ();
}

/* Frames that ran before the attach: found by walking from the current one,
 * less the `skip` innermost (frames of a Python profile function, whose
 * returns no profile function sees), entered outermost first with sp 0
 * ("place unknown"). */
static void
py_seed (TidePyThread *t,
         int           skip)
{
  void *chain[TIDE_PY_MAX_DEPTH];
  uint32_t n = 0;
  void *f = tide_py.get_frame ();

  t->depth = 0;
  if (tide_py.frame_back == NULL)
    return;  /* 3.8: only frames called after the attach */
  while (f != NULL && n < TIDE_PY_MAX_DEPTH)
    {
      void *back;

      if (skip > 0)
        skip--;
      else
        chain[n++] = f;
      back = tide_py.frame_back (f);
      if (back != NULL)
        tide_py.decref (back);  /* kept alive by the frame being executed */
      f = back;
    }
  while (n-- > 0)
    py_push (chain[n], 0);
}

/* Called by the tidemark package (ctypes.PyDLL: the GIL is held) on each
 * thread that runs Python.  Returns 1 when this thread is now traced. */
TIDE_EXPORT int
tidemark_preload_python_attach (int skip)
{
  TidePyThread *t = &tide_py_tls;
  uint32_t index;
  void *capsule;
  int saved = errno;

  if (!tide_active () || !py_resolve ())
    return 0;
  index = atomic_fetch_add (&tide_py_next_slot, 1);
  if (index >= TIDE_PY_SLOTS)
    return 0;
  tide_tls.guard++;
  capsule = tide_py.capsule_new (&tide_py_slots[index], TIDE_PY_CAPSULE_NAME,
                                 py_capsule_destroyed);
  tide_tls.guard--;
  if (capsule == NULL)
    {
      tide_py.err_clear ();
      return 0;
    }
  atomic_store (&tide_py_slots[index].valid, 0);
  t->slot = &tide_py_slots[index];
  t->depth = 0;
  tide_py.set_profile (py_profile, capsule);  /* the old capsule, if any, dies */
  tide_py.decref (capsule);                   /* the thread state holds it */
  py_seed (t, skip);
  atomic_store (&tide_py_slots[index].valid, 1);
  errno = saved;
  return 1;
}

/* ---- the allocation hook's side ------------------------------------------------ */

uint32_t
tide_python_depth (void)
{
  TidePyThread *t = &tide_py_tls;

  if (t->depth == 0 || t->slot == NULL
      || atomic_load_explicit (&t->slot->valid, memory_order_relaxed) == 0)
    return 0;
  return t->depth < TIDE_PY_MAX_DEPTH ? t->depth : TIDE_PY_MAX_DEPTH;
}

static bool
py_is_eval (uint64_t pc)
{
  /* A return address points after the call: look one byte back. */
  return pc - 1 >= tide_py.eval_start && pc - 1 < tide_py.eval_end;
}

/* Python frames of entries [lo, hi) of the shadow stack, innermost first. */
static uint32_t
py_emit (const TidePyThread *t,
         uint32_t            lo,
         uint32_t            hi,
         uint64_t           *out,
         uint32_t            n,
         uint32_t            max)
{
  for (uint32_t i = hi; i-- > lo && n < max;)
    {
      int line = tide_py.frame_line (t->entries[i].frame);

      out[n++] = tide_wire_pyframe_pack (t->entries[i].code_id, line > 0 ? (uint32_t) line : 0);
    }
  return n;
}

/* Start of the innermost group of entries below `hi` (same C stack
 * pointer: run by one C-level evaluation). */
static uint32_t
py_group_start (const TidePyThread *t,
                uint32_t            hi)
{
  uint32_t lo = hi - 1;

  while (lo > 0 && t->entries[lo - 1].sp == t->entries[hi - 1].sp)
    lo--;
  return lo;
}

uint32_t
tide_python_splice (uint64_t *frames,
                    uint32_t  n_frames,
                    uint32_t  max_frames)
{
  const TidePyThread *t = &tide_py_tls;
  uint64_t native[TIDE_WIRE_MAX_FRAMES];
  uint32_t hi = tide_python_depth (), seeded = 0, n = 0;

  if (hi == 0 || max_frames > TIDE_WIRE_MAX_FRAMES)
    return n_frames;
  while (seeded < hi && t->entries[seeded].sp == 0)
    seeded++;
  memcpy (native, frames, n_frames * sizeof (uint64_t));
  for (uint32_t i = 0; i < n_frames && n < max_frames; i++)
    {
      if (!py_is_eval (native[i]))
        frames[n++] = native[i];
      else if (hi > seeded)
        {
          uint32_t lo = py_group_start (t, hi);

          n = py_emit (t, lo < seeded ? seeded : lo, hi, frames, n, max_frames);
          hi = lo < seeded ? seeded : lo;
        }
      else if (hi > 0)
        {
          /* The frames from before the attach stand for every evaluation
           * frame left. */
          n = py_emit (t, 0, hi, frames, n, max_frames);
          hi = 0;
        }
    }
  /* Evaluation frames not found (a truncated stack, a stripped
   * interpreter): the rest of the Python frames go outermost. */
  return py_emit (t, 0, hi, frames, n, max_frames);
}

/* On a new connection: at start-up or in the child of a fork, where this
 * is the only thread, so the lock is made anew in case the fork caught
 * another thread holding it (the list is consistent at every point). */
void
tide_python_resend_all (void)
{
  pthread_mutex_init (&tide_py_def_lock, NULL);
  pthread_mutex_lock (&tide_py_def_lock);
  for (TidePyDef *def = tide_py_defs; def != NULL; def = def->next)
    tide_send_direct (def->rec, def->len);
  pthread_mutex_unlock (&tide_py_def_lock);
}

/* Whether this process is being recorded. */
TIDE_EXPORT int
tidemark_preload_enabled (void)
{
  return tide_active ();
}

/* torch.distributed rank of this process and its DataLoader worker index,
 * -1 where unknown. */
TIDE_EXPORT void
tidemark_preload_process_info (int rank,
                               int local_rank,
                               int world_size,
                               int loader_worker)
{
  _Alignas (8) unsigned char rec[sizeof (TideWireProcessInfo)];
  TideWireProcessInfo *r = (TideWireProcessInfo *) rec;
  TideStamp st;
  int saved = errno;

  if (!tide_active ())
    return;
  tide_tls.guard++;
  st = tide_stamp ();
  memset (rec, 0, sizeof rec);
  r->h = (TideWireHeader) { .type = TIDE_WIRE_PROCESS_INFO, .len = sizeof rec,
                            .tid = st.tid, .time_ns = st.time_ns };
  r->rank = rank;
  r->local_rank = local_rank;
  r->world_size = world_size;
  r->loader_worker = loader_worker;
  tide_send_direct (rec, sizeof rec);
  tide_tls.guard--;
  errno = saved;
}
