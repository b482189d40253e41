/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tide-preload-python.c: the Python frames of recorded allocations.
 *
 * Reading Python frames from inside a malloc hook is where profilers crash:
 * on 3.11+ PyEval_GetFrame and PyFrame_GetBack create frame objects on
 * demand (an allocation, possibly a garbage collection, inside malloc), and
 * PyTorch releases the GIL in nearly every operator, so "only when the GIL
 * is held" would miss the allocations that matter.  On 3.11 the frames are
 * read in place where the interpreter keeps them (tide-preload-pylayout.c),
 * at a sampled allocation only: no profile function, which would run every
 * instruction of the program through 3.11's tracing path.  Code objects
 * are then named from their own fields, since no C API may be called
 * inside an allocation (pymalloc, or tracemalloc's lock, may be mid-way).
 *
 * Elsewhere (or with TIDEMARK_PYTHON_FRAMES=profile) each thread
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
#include "tide-preload-pylayout.h"
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
#define TIDE_PY_MAX_WALK     4096u  /* frames read in place, at most */

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
  int         (*addr2line) (void *, int);
  void       *(*tstate_get) (void);         /* PyThreadState_Get */
  void       *(*tstate_holding_gil) (void); /* _PyThreadState_UncheckedGet */
  void       *(*thread_dict) (void);
  int         (*dict_set) (void *, const char *, void *);
  uintptr_t     eval_start;
  uintptr_t     eval_end;
  int           minor;
  bool          ok;
  bool          tried;
  bool          in_place_decided;
  _Atomic bool  in_place;       /* frames read in place, no profile function */
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

/* A line of a pinned code object, at one instruction offset. */
typedef struct
{
  const void *code;
  int32_t     offset;
  uint32_t    line;
} TidePyLine;

#define TIDE_PY_LINE_SLOTS 256

typedef struct
{
  TidePySlot *slot;     /* NULL: never attached */
  const void *tstate;   /* frames read in place: this thread's PyThreadState */
  uint32_t    depth;    /* may exceed TIDE_PY_MAX_DEPTH: counted only */
  TidePyEntry entries[TIDE_PY_MAX_DEPTH];
  TidePyLine  lines[TIDE_PY_LINE_SLOTS];  /* frames read in place: see py_line */
} TidePyThread;

/* A named code object.  Read without a lock (a reader that sees `code`
 * sees the rest), written under tide_py_code_lock. */
typedef struct
{
  _Atomic (void *)  code;
  _Atomic uint32_t  id;
  _Atomic bool      pinned;     /* we hold a reference: the id keeps its meaning */
  /* Unpinned (named without the GIL): what it was named from, so that a
   * new code object at a freed one's address is told apart. */
  _Atomic (const void *) file_obj;
  _Atomic (const void *) name_obj;
  _Atomic int32_t   first_line;
} TidePyCode;

typedef struct
{
  uint32_t   cap;       /* a power of two */
  uint32_t   used;
  TidePyCode slots[];
} TidePyTable;

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

static TidePySlot *tide_py_slots;
static _Atomic uint32_t tide_py_next_slot;
/* Replaced whole when it grows; an old table is never unmapped, since a
 * reader without the GIL may still be in it. */
static _Atomic (TidePyTable *) tide_py_table;
static _Atomic uint32_t tide_py_next_id = 1;
/* Guards the code table's writes and the list of definitions. */
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
  tide_py.minor = (int) minor;
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
  PY_SYM (addr2line, "PyCode_Addr2Line");
  PY_SYM (tstate_get, "PyThreadState_Get");
  PY_SYM (tstate_holding_gil, "_PyThreadState_UncheckedGet");
  PY_SYM (thread_dict, "PyThreadState_GetDict");
  PY_SYM (dict_set, "PyDict_SetItemString");
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

/* A code object's names, copied: taken before the lock, defined under it. */
typedef struct
{
  char file[TIDE_WIRE_MAX_STRING / 2];
  char name[TIDE_WIRE_MAX_STRING / 2];
  long first_line;
} TidePyNames;

static void
py_copy_name (char       *dst,
              size_t      cap,
              const char *src)
{
  size_t n = src != NULL ? strnlen (src, cap - 1) : 1;

  memcpy (dst, src != NULL ? src : "?", n);
  dst[n] = '\0';
}

/* Through the C API: any str, with the GIL held. */
static void
py_names_from_api (void        *code,
                   TidePyNames *out)
{
  void *file_obj, *name_obj;
  const char *file = py_attr_utf8 (code, "co_filename", &file_obj);
  const char *name = py_attr_utf8 (code, "co_qualname", &name_obj);

  if (name_obj == NULL)
    name = py_attr_utf8 (code, "co_name", &name_obj);
  py_copy_name (out->file, sizeof out->file, file);
  py_copy_name (out->name, sizeof out->name, name);
  out->first_line = py_attr_long (code, "co_firstlineno");
  if (file_obj != NULL)
    tide_py.decref (file_obj);
  if (name_obj != NULL)
    tide_py.decref (name_obj);
}

/* In place: inside an allocation hook, where the C API must not be
 * called (the allocator, or tracemalloc's lock, may be mid-way). */
static void
py_names_in_place (const TidePyCodeNames *seen,
                   TidePyNames           *out)
{
  tide_pylayout_str_utf8 (seen->file_obj, out->file, sizeof out->file);
  tide_pylayout_str_utf8 (seen->name_obj, out->name, sizeof out->name);
  out->first_line = seen->first_line;
}

/* One PYFRAME_DEF, sent and kept for the resend after a fork.  Under
 * tide_py_def_lock: sent before the id can be found, so that no record
 * names an id before its definition. */
static void
py_define (uint32_t           id,
           const TidePyNames *names)
{
  _Alignas (8) unsigned char rec[sizeof (TideWirePyFrameDef) + TIDE_WIRE_MAX_STRING];
  uint32_t len = py_encode_def (rec, sizeof rec, id, names->first_line, names->file, names->name);
  TidePyDef *def;

  if (len == 0)
    return;
  if ((def = py_def_new (len)) != NULL)
    {
      memcpy (def->rec, rec, len);
      *tide_py_defs_tail = def;
      tide_py_defs_tail = &def->next;
    }
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

static TidePyCode *
py_code_find (TidePyTable *table,
              const void  *code)
{
  uint32_t i;
  void *c;

  if (table == NULL)
    return NULL;
  i = py_code_slot (code, table->cap);
  while ((c = atomic_load_explicit (&table->slots[i].code, memory_order_acquire)) != NULL)
    {
      if (c == code)
        return &table->slots[i];
      i = (i + 1) & (table->cap - 1);
    }
  return NULL;
}

static void
py_code_copy (TidePyCode       *to,
              const TidePyCode *from)
{
  atomic_store (&to->id, atomic_load (&from->id));
  atomic_store (&to->pinned, atomic_load (&from->pinned));
  atomic_store (&to->file_obj, atomic_load (&from->file_obj));
  atomic_store (&to->name_obj, atomic_load (&from->name_obj));
  atomic_store (&to->first_line, atomic_load (&from->first_line));
  atomic_store_explicit (&to->code, atomic_load (&from->code), memory_order_release);
}

/* Under tide_py_def_lock.  The old table stays mapped for its readers. */
static TidePyTable *
py_table_grow (TidePyTable *old)
{
  uint32_t cap = old != NULL ? old->cap * 2 : TIDE_PY_TABLE_MIN;
  TidePyTable *table = tide_raw_mmap (sizeof (TidePyTable) + cap * sizeof (TidePyCode));

  if (table == NULL)
    return NULL;
  table->cap = cap;
  for (uint32_t i = 0; old != NULL && i < old->cap; i++)
    {
      void *code = atomic_load (&old->slots[i].code);
      uint32_t j;

      if (code == NULL)
        continue;
      j = py_code_slot (code, cap);
      while (atomic_load (&table->slots[j].code) != NULL)
        j = (j + 1) & (cap - 1);
      py_code_copy (&table->slots[j], &old->slots[i]);
      table->used++;
    }
  atomic_store_explicit (&tide_py_table, table, memory_order_release);
  return table;
}

/* A free slot for @code (its `code` still NULL), under tide_py_def_lock. */
static TidePyCode *
py_code_claim (const void *code)
{
  TidePyTable *table = atomic_load (&tide_py_table);
  uint32_t i;

  if ((table == NULL || (table->used + 1) * 2 > table->cap)
      && (table = py_table_grow (table)) == NULL)
    return NULL;
  i = py_code_slot (code, table->cap);
  while (atomic_load (&table->slots[i].code) != NULL)
    i = (i + 1) & (table->cap - 1);
  table->used++;
  return &table->slots[i];
}

/* Whether an unpinned entry still names the object at its address: a code
 * object freed and another made there has other names. */
static bool
py_code_current (TidePyCode            *entry,
                 const TidePyCodeNames *seen)
{
  return atomic_load_explicit (&entry->file_obj, memory_order_relaxed) == seen->file_obj
         && atomic_load_explicit (&entry->name_obj, memory_order_relaxed) == seen->name_obj
         && atomic_load_explicit (&entry->first_line, memory_order_relaxed) == seen->first_line;
}

/* Names @code anew (or again, where its entry is stale), under the lock. */
static uint32_t
py_code_name (void                  *code,
              bool                   gil,
              const TidePyCodeNames *seen)
{
  TidePyNames names;
  TidePyCode *entry;
  uint32_t id = 0;

  if (!atomic_load_explicit (&tide_py.in_place, memory_order_relaxed))
    {
      tide_tls.guard++;
      py_names_from_api (code, &names);
      tide_tls.guard--;
    }
  else
    py_names_in_place (seen, &names);
  tide_tls.guard++;
  pthread_mutex_lock (&tide_py_def_lock);
  entry = py_code_find (atomic_load (&tide_py_table), code);
  if (entry != NULL && (atomic_load (&entry->pinned) || py_code_current (entry, seen)))
    {
      /* Another thread named it meanwhile. */
      if (gil && !atomic_load (&entry->pinned))
        {
          tide_py.incref (code);
          atomic_store (&entry->pinned, true);
        }
      id = atomic_load (&entry->id);
      goto out;
    }
  if (entry == NULL && (entry = py_code_claim (code)) == NULL)
    goto out;
  id = atomic_fetch_add (&tide_py_next_id, 1);
  if (gil)
    tide_py.incref (code);  /* an id never changes meaning */
  atomic_store (&entry->id, id);
  atomic_store (&entry->pinned, gil);
  atomic_store (&entry->file_obj, seen->file_obj);
  atomic_store (&entry->name_obj, seen->name_obj);
  atomic_store (&entry->first_line, seen->first_line);
  py_define (id, &names);
  atomic_store_explicit (&entry->code, code, memory_order_release);
out:
  pthread_mutex_unlock (&tide_py_def_lock);
  tide_tls.guard--;
  return id;
}

/* The id of a code object, named on first sight.  Without the GIL (frames
 * read in place, a C function that released it) the code is named from its
 * own fields, and is not pinned until a lookup with the GIL. */
static uint32_t
py_code_id (void *code,
            bool  gil,
            bool *pinned)
{
  TidePyCodeNames seen = { 0 };
  TidePyCode *entry;
  uint32_t id;

  *pinned = false;
  if (code == NULL)
    return 0;
  entry = py_code_find (atomic_load_explicit (&tide_py_table, memory_order_acquire), code);
  if (entry != NULL && atomic_load_explicit (&entry->pinned, memory_order_acquire))
    {
      *pinned = true;
      return atomic_load_explicit (&entry->id, memory_order_relaxed);
    }
  /* Only frames read in place make unpinned entries, or need names read
   * so. */
  if (atomic_load_explicit (&tide_py.in_place, memory_order_relaxed))
    tide_pylayout_code_names (code, &seen);
  if (entry != NULL && !gil && py_code_current (entry, &seen))
    return atomic_load_explicit (&entry->id, memory_order_relaxed);
  /* Named with the GIL: pinned. */
  id = py_code_name (code, gil, &seen);
  *pinned = gil && id != 0;
  return id;
}

/* ---- the shadow stack --------------------------------------------------------- */

static void
py_push (void     *frame,
         uintptr_t sp)
{
  TidePyThread *t = &tide_py_tls;
  uint32_t depth = t->depth;
  bool pinned;

  t->depth = depth + 1;
  if (depth >= TIDE_PY_MAX_DEPTH)
    return;
  t->entries[depth] = (TidePyEntry) { .frame = frame, .sp = sp,
                                      .code_id = py_code_id (py_frame_code (frame), true,
                                                             &pinned) };
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

/* Whether frames are read in place (3.11, its layout checked on this
 * interpreter) instead of kept by a profile function.  Decided on the first
 * attach, from the Python function that called it; GIL held.
 * TIDEMARK_PYTHON_FRAMES=profile keeps the profile function. */
static bool
py_decide_in_place (void)
{
  const char *env = getenv ("TIDEMARK_PYTHON_FRAMES");
  void *frame, *code;
  TidePyNames names;
  bool ok;

  if (tide_py.in_place_decided)
    return atomic_load (&tide_py.in_place);
  tide_py.in_place_decided = true;
  if ((env != NULL && strcmp (env, "profile") == 0) || tide_py.minor != 11
      || sizeof (void *) != 8 || tide_py.addr2line == NULL || tide_py.tstate_get == NULL
      || tide_py.tstate_holding_gil == NULL || tide_py.thread_dict == NULL
      || tide_py.dict_set == NULL || tide_py.frame_code == NULL || tide_py.frame_back == NULL
      || (frame = tide_py.get_frame ()) == NULL
      || (code = tide_py.frame_code (frame)) == NULL)
    return false;
  py_names_from_api (code, &names);
  tide_py.decref (code);
  ok = tide_pylayout_check (tide_py.tstate_get (), frame, &(TidePyLayoutTruth) {
    .addr2line = tide_py.addr2line, .frame_line = tide_py.frame_line,
    .frame_code = tide_py.frame_code, .frame_back = tide_py.frame_back,
    .decref = tide_py.decref, .code_file = names.file, .code_name = names.name,
    .first_line = names.first_line,
  });
  atomic_store (&tide_py.in_place, ok);
  return ok;
}

/* Frames read in place: the thread state is kept, and the slot's capsule
 * goes into the thread's dict, which CPython clears before it frees the
 * thread state, so that a thread state is never read once gone.  The
 * profile function that called the attach of a new thread is removed. */
static bool
py_attach_in_place (TidePyThread *t,
                    void         *capsule)
{
  void *dict = tide_py.thread_dict ();

  if (dict == NULL || tide_py.dict_set (dict, TIDE_PY_CAPSULE_NAME, capsule) != 0)
    {
      tide_py.err_clear ();
      return false;
    }
  t->tstate = tide_py.tstate_get ();
  t->depth = 0;
  tide_py.set_profile (NULL, NULL);
  return true;
}

static bool
py_attach_profile (TidePyThread *t,
                   void         *capsule,
                   int           skip)
{
  t->tstate = NULL;
  t->depth = 0;
  tide_py.set_profile (py_profile, capsule);  /* the old capsule, if any, dies */
  py_seed (t, skip);
  return true;
}

/* Called by the tidemark package (ctypes.PyDLL: the GIL is held) on each
 * thread that runs Python.  Returns 1 when this thread is now traced. */
TIDE_EXPORT int
tidemark_preload_python_attach (int skip)
{
  TidePyThread *t = &tide_py_tls;
  uint32_t index;
  void *capsule;
  bool attached;
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
  tide_tls.guard++;
  attached = py_decide_in_place () ? py_attach_in_place (t, capsule)
                                   : py_attach_profile (t, capsule, skip);
  tide_tls.guard--;
  tide_py.decref (capsule);  /* the thread state holds it */
  atomic_store (&tide_py_slots[index].valid, attached);
  errno = saved;
  return attached;
}

/* ---- the allocation hook's side ------------------------------------------------ */

static inline bool
py_slot_valid (const TidePyThread *t)
{
  return t->slot != NULL && atomic_load_explicit (&t->slot->valid, memory_order_relaxed) != 0;
}

uint32_t
tide_python_depth (void)
{
  TidePyThread *t = &tide_py_tls;

  if (t->tstate != NULL)
    return py_slot_valid (t) && tide_pylayout_top (t->tstate) != NULL;
  if (t->depth == 0 || !py_slot_valid (t))
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

/* The line of @code at @offset.  Finding it walks the code's location
 * table, long for a module's body, and the same frames are met sample after
 * sample; so each thread keeps the lines it found in pinned code objects.
 * We hold a reference to those: the object keeps its address and its
 * table, and its line at an offset never changes. */
static uint32_t
py_line (void    *code,
         int32_t  offset,
         bool     pinned)
{
  TidePyLine *slot;
  uint32_t line;

  if (!pinned)
    return tide_pylayout_line_at (code, offset);
  slot = &tide_py_tls.lines[tide_hash_ids ((uintptr_t) code, (uint32_t) offset, 0)
                            & (TIDE_PY_LINE_SLOTS - 1)];
  if (slot->code == code && slot->offset == offset)
    return slot->line;
  line = tide_pylayout_line_at (code, offset);
  *slot = (TidePyLine) { code, offset, line };
  return line;
}

/* Frames read in place, from *frame outwards, innermost first: those of
 * one C-level evaluation (up to its entry frame), or all when @to_the_end. */
static uint32_t
py_emit_in_place (const void **frame,
                  bool         gil,
                  bool         to_the_end,
                  uint32_t    *walked,
                  uint64_t    *out,
                  uint32_t     n,
                  uint32_t     max)
{
  const void *f = *frame;

  while (f != NULL && n < max && *walked < TIDE_PY_MAX_WALK)
    {
      bool entry = tide_pylayout_is_entry (f);

      void *code = tide_pylayout_code (f);
      bool pinned;
      uint32_t id = py_code_id (code, gil, &pinned);

      out[n++] = tide_wire_pyframe_pack (id, py_line (code, tide_pylayout_offset (f), pinned));
      f = tide_pylayout_previous (f);
      ++*walked;
      if (entry && !to_the_end)
        break;
    }
  *frame = *walked < TIDE_PY_MAX_WALK ? f : NULL;
  return n;
}

static uint32_t
py_splice_in_place (const TidePyThread *t,
                    uint64_t           *frames,
                    uint32_t            n_frames,
                    uint32_t            max_frames)
{
  uint64_t native[TIDE_WIRE_MAX_FRAMES];
  const void *f = tide_pylayout_top (t->tstate);
  bool gil = tide_py.tstate_holding_gil () == t->tstate;
  uint32_t n = 0, walked = 0;

  memcpy (native, frames, n_frames * sizeof (uint64_t));
  for (uint32_t i = 0; i < n_frames && n < max_frames; i++)
    {
      if (!py_is_eval (native[i]))
        frames[n++] = native[i];
      else if (f != NULL)
        n = py_emit_in_place (&f, gil, false, &walked, frames, n, max_frames);
    }
  /* Evaluation frames not found (a truncated stack, a stripped
   * interpreter): the rest of the Python frames go outermost. */
  return py_emit_in_place (&f, gil, true, &walked, frames, n, max_frames);
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
  if (t->tstate != NULL)
    return py_splice_in_place (t, frames, n_frames, max_frames);
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
  pthread_mutex_init (&tide_py_def_lock, NULL);  /* the code table's too */
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
