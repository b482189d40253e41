/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * The CPython interpreter of a followed process (tide-attach-python.h).
 *
 * Finding it: the mapping of a file named python3.N or libpython3.N.so
 * whose ELF symbols have _PyRuntime (Debian's python3 links the
 * interpreter in statically and exports it).  The layouts of 3.8 to 3.13
 * are known (tide-attach-pylayout.c); where the interpreter publishes its
 * own offsets (3.13's _Py_DebugOffsets at the start of _PyRuntime), those
 * are taken once checked.  The process's own thread states must agree
 * with the layout: the first interpreter's first thread state must name
 * that interpreter back.  A python seen at its exec has none yet: its frames
 * are read from the start (the BPF program finds no thread state until
 * there is one, and a code object is named only if it is one), and the
 * check is made again until it can be.
 *
 * Naming a frame: the BPF program gives the address of the code object and
 * the byte offset of the instruction.  The code object is read once with
 * process_vm_readv, checked to be one (its type is PyCode_Type), and kept
 * with its name (qualified from 3.11), file, first line and line table;
 * the line comes from the table, as that version's PyCode_Addr2Line reads
 * it.  A code object that
 * cannot be read, or is not one (the frame chain changed while the BPF
 * program read it), ends the Python frames of that sample: the stack keeps
 * the evaluation loop's own frames from there.
 *
 * Module scopes: the `self` of a frame whose function is named forward is,
 * in a PyTorch job, the nn.Module that runs it; its class's name, read once
 * per object, names the sample's scope, nested as the forward frames are
 * ("Net/DecoupledLinear").  Module names (encoder.layers.3) are not known
 * from outside: only record's hooks see them.
 */
#include "config.h"

#include "tide-attach-python.h"

#include <fcntl.h>
#include <gelf.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "tide-attach-pylayout.h"
#include "tide-proc-maps.h"
#include "tide-py311.h"
#include "tide-stack-table.h"
#include "tide-wire.h"

#define CODE_HEADER_BYTES  256   /* every field read of a code object, in any version */
#define MAX_NAME_BYTES     4096
#define MAX_LINETABLE      (1 << 20)

/* The entry codes of CPython 3.11's location tables (co_linetable). */
enum
{
  LOCATION_ONE_LINE0   = 10,
  LOCATION_ONE_LINE2   = 12,
  LOCATION_NO_COLUMNS  = 13,
  LOCATION_LONG        = 14,
  LOCATION_NONE        = 15,
};

#define MAX_SCOPE_DEPTH    8
#define MAX_CLASS_NAME     256

/* What a code object is to the optimizer-step finder. */
typedef enum
{
  PY_CODE_OTHER,
  PY_CODE_GRAD_MODE,   /* torch.autograd.grad_mode: set_grad_enabled, no_grad ... */
  PY_CODE_USE_GRAD,    /* torch.optim's _use_grad: switches grad mode around a step */
  PY_CODE_STEP_WRAPPER, /* torch.optim's profiler wrapper around every step() */
} PyCodeRole;

typedef struct
{
  guint32  id;          /* the process's Python code id (TidePyCode) */
  gboolean is_forward;  /* Class.forward: its `self` names a module scope */
  PyCodeRole role;
  gint32   first_switch; /* a step's frame: the lowest offset that switched grad mode */
  gint     first_line;
  gint64   n_units;     /* instructions, in code units */
  guint8  *linetable;
  gsize    linetable_len;
} PyCodeEntry;

struct _TideAttachPython
{
  pid_t       pid;
  int         major;
  int         minor;
  TidePyLayout layout;      /* where its version keeps what is read */
  guint64     runtime;      /* &_PyRuntime */
  gboolean    confirmed;    /* its thread states agree with the layout */
  guint64     eval_start;   /* _PyEval_EvalFrameDefault's code */
  guint64     eval_end;
  guint64     code_type;    /* &PyCode_Type */
  GHashTable *codes;        /* code object address -> PyCodeEntry* */
  guint32     next_id;
  GHashTable *classes;      /* object address -> its class's name (tp_name), "": unreadable */
  GHashTable *scopes;       /* "parent scope id/class name" -> scope id */
  guint32     next_scope;
  guint64     step_owner;   /* the optimizer whose steps are the steps; 0: none yet */
};

static void
py_code_entry_free (PyCodeEntry *entry)
{
  g_free (entry->linetable);
  g_free (entry);
}

/* ---- the process's memory ----------------------------------------------------- */

/* Up to @len bytes at @addr of the process; the bytes read (a read stops
 * at the first page that is not mapped). */
static gsize
read_some (pid_t    pid,
           guint64  addr,
           void    *buf,
           gsize    len)
{
  struct iovec local = { buf, len }, remote = { (void *) (guintptr) addr, len };
  ssize_t n;

  if (addr == 0 || len == 0)
    return 0;
  n = process_vm_readv (pid, &local, 1, &remote, 1, 0);
  return n > 0 ? (gsize) n : 0;
}

static gboolean
read_exact (pid_t    pid,
            guint64  addr,
            void    *buf,
            gsize    len)
{
  return read_some (pid, addr, buf, len) == len;
}

static guint64
read_u64 (pid_t   pid,
          guint64 addr)
{
  guint64 value = 0;

  return read_exact (pid, addr, &value, sizeof value) ? value : 0;
}

static guint64
field_u64 (const guint8 *obj,
           gsize         offset)
{
  guint64 value;

  memcpy (&value, obj + offset, sizeof value);
  return value;
}

/* A str object of the process as UTF-8, NULL when it cannot be read. */
static char *
read_str (pid_t               pid,
          const TidePyLayout *layout,
          guint64             addr)
{
  g_autofree guint8 *obj = NULL;
  gint64 length;
  gsize want, got;
  char out[1024];

  if (!read_exact (pid, addr + TIDE_PY311_STR_LENGTH, &length, sizeof length) || length < 0)
    return NULL;
  /* At most 4 bytes a character, after the larger header. */
  want = MIN ((gsize) layout->str_compact_data + 4 * (gsize) length, MAX_NAME_BYTES);
  obj = g_malloc (want);
  got = read_some (pid, addr, obj, want);
  tide_py_str_utf8 (obj, got, layout->str_ascii_data, layout->str_compact_data, out, sizeof out);
  return out[0] != '\0' ? g_strdup (out) : NULL;
}

static guint8 *
read_bytes_object (pid_t    pid,
                   guint64  addr,
                   gsize   *len)
{
  guint8 head[TIDE_PY311_BYTES_DATA];
  gint64 size;
  guint8 *data;

  *len = 0;
  if (!read_exact (pid, addr, head, sizeof head))
    return NULL;
  memcpy (&size, head + TIDE_PY311_VAR_SIZE, sizeof size);
  if (size < 0 || size > MAX_LINETABLE)
    return NULL;
  data = g_malloc (size > 0 ? (gsize) size : 1);
  if (!read_exact (pid, addr + TIDE_PY311_BYTES_DATA, data, (gsize) size))
    {
      g_free (data);
      return NULL;
    }
  *len = (gsize) size;
  return data;
}

/* ---- finding the interpreter --------------------------------------------------- */

typedef struct
{
  guint64 runtime;
  guint64 eval;
  guint64 eval_size;
  guint64 code_type;
} PySymbols;

static void
take_symbol (PySymbols       *out,
             const char      *name,
             const GElf_Sym  *sym)
{
  if (sym->st_shndx == SHN_UNDEF || sym->st_value == 0)
    return;
  if (strcmp (name, "_PyRuntime") == 0)
    out->runtime = sym->st_value;
  else if (strcmp (name, "_PyEval_EvalFrameDefault") == 0)
    out->eval = sym->st_value, out->eval_size = sym->st_size;
  else if (strcmp (name, "PyCode_Type") == 0)
    out->code_type = sym->st_value;
}

/* The interpreter's symbols from the dynamic and static symbol tables of
 * @path (ELF addresses); FALSE when the file cannot be read. */
static gboolean
read_symbols (const char *path,
              PySymbols  *out)
{
  int fd = open (path, O_RDONLY | O_CLOEXEC);
  Elf_Scn *scn = NULL;
  Elf *elf;

  memset (out, 0, sizeof *out);
  if (fd < 0)
    return FALSE;
  elf_version (EV_CURRENT);
  elf = elf_begin (fd, ELF_C_READ_MMAP, NULL);
  while (elf != NULL && (scn = elf_nextscn (elf, scn)) != NULL)
    {
      GElf_Shdr shdr;
      Elf_Data *data;

      if (gelf_getshdr (scn, &shdr) == NULL ||
          (shdr.sh_type != SHT_DYNSYM && shdr.sh_type != SHT_SYMTAB) || shdr.sh_entsize == 0 ||
          (data = elf_getdata (scn, NULL)) == NULL)
        continue;
      for (gsize i = 0; i < shdr.sh_size / shdr.sh_entsize; i++)
        {
          GElf_Sym sym;
          const char *name;

          if (gelf_getsym (data, (int) i, &sym) != NULL &&
              (name = elf_strptr (elf, shdr.sh_link, sym.st_name)) != NULL && name[0] != '\0')
            take_symbol (out, name, &sym);
        }
    }
  if (elf != NULL)
    elf_end (elf);
  close (fd);
  return TRUE;
}

/* "python3.11", "python3.11d", "libpython3.11.so.1.0": the version. */
static gboolean
python_file_version (const char *path,
                     int        *major,
                     int        *minor)
{
  g_autofree char *base = g_path_get_basename (path);
  const char *v = g_str_has_prefix (base, "libpython") ? base + 9
                  : g_str_has_prefix (base, "python") ? base + 6 : NULL;
  char *end;

  if (v == NULL || !g_ascii_isdigit (v[0]))
    return FALSE;
  *major = (int) g_ascii_strtoll (v, &end, 10);
  if (*end != '.' || !g_ascii_isdigit (end[1]))
    return FALSE;
  *minor = (int) g_ascii_strtoll (end + 1, &end, 10);
  return TRUE;
}

typedef enum
{
  STATES_AGREE,
  STATES_NOT_YET,     /* no interpreter yet: a python that has just exec'd */
  STATES_DISAGREE,
} StatesCheck;

/* Whether the process's first interpreter and its first thread state name
 * each other at the offsets of @layout. */
static StatesCheck
check_thread_states (pid_t               pid,
                     const TidePyLayout *layout,
                     guint64             runtime)
{
  guint64 interp = read_u64 (pid, runtime + layout->runtime_interp_head);
  guint64 tstate = interp ? read_u64 (pid, interp + layout->interp_tstate_head) : 0;

  if (interp == 0 || tstate == 0)
    return STATES_NOT_YET;
  return read_u64 (pid, tstate + layout->tstate_interp) == interp ? STATES_AGREE
                                                                  : STATES_DISAGREE;
}

/* The layout of the interpreter whose _PyRuntime is at @runtime: its
 * version's row, or the offsets it publishes itself where it does and they
 * can be used.  FALSE with one line in *@message for a build whose
 * published offsets cannot. */
static gboolean
choose_layout (TideAttachPython    *self,
               const TidePyLayout  *row,
               char               **message)
{
  guint64 words[TIDE_PY_DEBUG_OFFSETS_WORDS];

  self->layout = *row;
  /* _Py_DebugOffsets came with 3.13. */
  if (row->minor < 13 || !read_exact (self->pid, self->runtime, words, sizeof words))
    return TRUE;
  switch (tide_attach_pylayout_from_debug (row, words, &self->layout))
    {
    case TIDE_PY_DEBUG_OFFSETS_ABSENT:
    case TIDE_PY_DEBUG_OFFSETS_TAKEN:
      return TRUE;
    case TIDE_PY_DEBUG_OFFSETS_UNFIT:
    default:
      *message = g_strdup_printf ("the debug offsets of Python %d.%d in process %d do not fit "
                                  "this build (a free-threaded or unusual build); native stacks "
                                  "only", self->major, self->minor, self->pid);
      return FALSE;
    }
}

/* The mapping of the interpreter, if the process maps one: the first file
 * named like one whose symbols have _PyRuntime, or else the first file
 * named like one (for the message). */
static const TideProcMapping *
find_interpreter (GArray    *maps,
                  PySymbols *symbols)
{
  const TideProcMapping *named = NULL;
  int major, minor;

  for (guint i = 0; i < maps->len; i++)
    {
      const TideProcMapping *m = &g_array_index (maps, TideProcMapping, i);

      if (!python_file_version (m->path, &major, &minor) ||
          (named != NULL && strcmp (named->path, m->path) == 0))
        continue;
      if (read_symbols (m->path, symbols) && symbols->runtime != 0)
        return m;
      if (named == NULL)
        named = m;
    }
  memset (symbols, 0, sizeof *symbols);
  return named;
}

static char *
describe_disagreement (TideAttachPython *self)
{
  return g_strdup_printf ("the thread states of Python %d.%d in process %d are not where this "
                          "build expects them; native stacks only", self->major, self->minor,
                          self->pid);
}

TideAttachPython *
tide_attach_python_new (pid_t             pid,
                        TideBpfPyTarget  *target,
                        char            **message)
{
  g_autoptr(GArray) maps = tide_proc_maps_read (pid, NULL);
  const TideProcMapping *m;
  TideAttachPython *self;
  const TidePyLayout *row;
  PySymbols sym;
  int major = 0, minor = 0;

  *message = NULL;
  if (maps == NULL || (m = find_interpreter (maps, &sym)) == NULL)
    return NULL;
  python_file_version (m->path, &major, &minor);
  if ((row = tide_attach_pylayout_for (major, minor)) == NULL)
    {
      *message = g_strdup_printf ("Python %d.%d frames are not supported (only 3.8 to 3.13); "
                                  "native stacks only", major, minor);
      return NULL;
    }
  if (sym.runtime == 0 || sym.eval == 0 || sym.code_type == 0)
    {
      *message = g_strdup_printf ("%s has no _PyRuntime, _PyEval_EvalFrameDefault or "
                                  "PyCode_Type symbol; native stacks only", m->path);
      return NULL;
    }
  self = g_new0 (TideAttachPython, 1);
  self->pid = pid;
  self->major = major;
  self->minor = minor;
  self->runtime = sym.runtime + m->load_bias;
  self->eval_start = sym.eval + m->load_bias;
  self->eval_end = self->eval_start + MAX (sym.eval_size, 1);
  self->code_type = sym.code_type + m->load_bias;
  self->codes = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free,
                                       (GDestroyNotify) py_code_entry_free);
  self->next_id = 1;
  self->classes = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, g_free);
  self->scopes = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  self->next_scope = 1;
  if (!choose_layout (self, row, message) ||
      (!tide_attach_python_confirm (self, message) && *message != NULL))
    {
      tide_attach_python_free (self);
      return NULL;
    }
  tide_attach_pylayout_fill_target (&self->layout, self->runtime, target);
  return self;
}

gboolean
tide_attach_python_confirm (TideAttachPython  *self,
                            char             **message)
{
  StatesCheck states = self->confirmed ? STATES_AGREE
                                       : check_thread_states (self->pid, &self->layout,
                                                              self->runtime);

  *message = states == STATES_DISAGREE ? describe_disagreement (self) : NULL;
  self->confirmed = states == STATES_AGREE;
  return self->confirmed;
}

void
tide_attach_python_free (TideAttachPython *self)
{
  if (self == NULL)
    return;
  g_hash_table_unref (self->codes);
  g_hash_table_unref (self->classes);
  g_hash_table_unref (self->scopes);
  g_free (self);
}

/* ---- code objects and lines ------------------------------------------------------ */

static guint64
read_varint (const guint8 *table,
             gsize         len,
             gsize        *i)
{
  guint64 value = 0;
  guint shift = 0;
  guint8 b;

  do
    {
      /* Cut short: *i past the end says so. */
      if (*i >= len || shift > 60)
        {
          *i = G_MAXSIZE;
          return 0;
        }
      b = table[(*i)++];
      value |= (guint64) (b & 63) << shift;
      shift += 6;
    }
  while (b & 64);
  return value;
}

static gint64
read_svarint (const guint8 *table,
              gsize         len,
              gsize        *i)
{
  guint64 value = read_varint (table, len, i);

  return (value & 1) ? -(gint64) (value >> 1) : (gint64) (value >> 1);
}

/* A line the tables add up, as a line number: 0 (none) where the table
 * says the instruction has none, or where a damaged table ran it out of
 * range. */
static gint
known_line (gint64   line,
            gboolean has_line)
{
  return !has_line || line <= 0 || line > G_MAXINT ? 0 : (gint) line;
}

/* Each entry: a first byte with bit 7 set, its code in bits 3..6 and the
 * number of code units it covers, less one, in bits 0..2; then what its
 * code says (line delta, columns).  A damaged table (an entry without its
 * first bit, or cut short) gives no line. */
gint
tide_attach_python_line (const guint8 *table,
                         gsize         len,
                         gint          first_line,
                         gint          offset)
{
  gint64 line = first_line, addr = 0;
  gsize i = 0;

  if (offset < 0)
    return first_line;
  while (i < len)
    {
      guint8 b = table[i++];
      guint code = (b >> 3) & 15;
      gint64 end = addr + ((b & 7) + 1) * TIDE_PY311_CODE_UNIT;

      if (!(b & 0x80))
        return 0;
      if (code == LOCATION_LONG)
        {
          line += read_svarint (table, len, &i);
          for (int k = 0; k < 3; k++)
            read_varint (table, len, &i);
        }
      else if (code == LOCATION_NO_COLUMNS)
        line += read_svarint (table, len, &i);
      else if (code >= LOCATION_ONE_LINE0 && code <= LOCATION_ONE_LINE2)
        {
          line += code - LOCATION_ONE_LINE0;
          i += 2;
        }
      else if (code != LOCATION_NONE)
        i += 1;
      if (i > len)
        return 0;
      if (offset < end)
        return known_line (line, code != LOCATION_NONE);
      addr = end;
    }
  return 0;
}

/* 3.8 and 3.9: (byte step, signed line step) pairs from the first line,
 * as PyCode_Addr2Line walks them: the line of the last pair whose address
 * is not past the offset. */
gint
tide_attach_python_line_lnotab (const guint8 *table,
                                gsize         len,
                                gint          first_line,
                                gint          offset)
{
  gint64 line = first_line, addr = 0;

  if (offset < 0)
    return first_line;
  for (gsize i = 0; i + 1 < len; i += 2)
    {
      addr += table[i];
      if (addr > offset)
        break;
      line += (gint8) table[i + 1];
    }
  return known_line (line, TRUE);
}

/* 3.10 (PEP 626): each pair is a range of bytes after the last and its
 * signed line step, -128 for a range without a line; the lines add up over
 * the ranges that have one.  An offset past the table has no line. */
gint
tide_attach_python_line_310 (const guint8 *table,
                             gsize         len,
                             gint          first_line,
                             gint          offset)
{
  gint64 line = first_line, end = 0;

  if (offset < 0)
    return first_line;
  for (gsize i = 0; i + 1 < len; i += 2)
    {
      gint8 step = (gint8) table[i + 1];

      end += table[i];
      if (step != -128)
        line += step;
      if (offset < end)
        return known_line (line, step != -128);
    }
  return 0;
}

/* The line of byte offset @offset in @code, by its version's table. */
static gint
code_line (const TidePyLayout *layout,
           const PyCodeEntry  *code,
           gint                offset)
{
  switch (layout->lines)
    {
    case TIDE_PY_LINES_LNOTAB:
      return tide_attach_python_line_lnotab (code->linetable, code->linetable_len,
                                             code->first_line, offset);
    case TIDE_PY_LINES_LINETABLE:
      return tide_attach_python_line_310 (code->linetable, code->linetable_len, code->first_line,
                                          offset);
    case TIDE_PY_LINES_LOCATIONS:
    default:
      return tide_attach_python_line (code->linetable, code->linetable_len, code->first_line,
                                      offset);
    }
}

/* A function named @name, by its qualified name (3.11+) or its name. */
static gboolean
is_named (const char *name,
          const char *want)
{
  gsize n = strlen (name), w = strlen (want);

  return strcmp (name, want) == 0 ||
         (n > w && name[n - w - 1] == '.' && strcmp (name + n - w, want) == 0);
}

/* torch.optim's optimizers switch grad mode off and back on around each
 * step() in one of two places (optimizer.py, torch 1.13 and 2.x):
 * `_use_grad`, the closure of _use_grad_for_differentiable (SGD, Adam,
 * RMSprop in 1.13), calls torch.set_grad_enabled itself; a step() under
 * `@torch.no_grad()` (AdamW, Adagrad, LBFGS ... in 1.13) has the
 * decorator switch it (grad_mode.py, whose decorator 2.x moved to
 * utils/_contextlib.py), called from `wrapper`, which Optimizer puts
 * around every subclass's step() for the profiler. */
static PyCodeRole
code_role (const char *file,
           const char *name)
{
  if (g_str_has_suffix (file, "/torch/autograd/grad_mode.py") ||
      g_str_has_suffix (file, "/torch/utils/_contextlib.py"))
    return PY_CODE_GRAD_MODE;
  if (!g_str_has_suffix (file, "/torch/optim/optimizer.py"))
    return PY_CODE_OTHER;
  if (is_named (name, "_use_grad"))
    return PY_CODE_USE_GRAD;
  if (is_named (name, "wrapper"))
    return PY_CODE_STEP_WRAPPER;
  return PY_CODE_OTHER;
}

/* The code units of a code object: where its instructions are inline
 * (3.11+), its size; before, that of its co_code bytes object. */
static gint64
code_units (TideAttachPython *self,
            const guint8     *obj)
{
  const TidePyLayout *layout = &self->layout;

  if (layout->code_code == 0)
    return (gint64) field_u64 (obj, TIDE_PY311_VAR_SIZE);
  return (gint64) read_u64 (self->pid, field_u64 (obj, layout->code_code) + TIDE_PY311_VAR_SIZE)
         / TIDE_PY311_CODE_UNIT;
}

/* The bytes of a code object up to the last field read, at most
 * CODE_HEADER_BYTES: no further, where the object may end its mapping. */
static gsize
code_header_bytes (const TidePyLayout *layout)
{
  gsize n = MAX ((gsize) layout->code_adaptive, (gsize) TIDE_PY311_VAR_SIZE + 8);

  n = MAX (n, (gsize) layout->code_firstlineno + 4);
  n = MAX (n, (gsize) MAX (layout->code_filename, layout->code_name) + 8);
  n = MAX (n, (gsize) MAX (layout->code_linetable, layout->code_code) + 8);
  return MIN (n, CODE_HEADER_BYTES);
}

/* A forward method: its `self` names a module scope.  Before 3.11 a code
 * object has no qualified name to say it is a method. */
static gboolean
is_forward_name (const TidePyLayout *layout,
                 const char         *name)
{
  return layout->code_adaptive != 0 ? g_str_has_suffix (name, ".forward")
                                    : strcmp (name, "forward") == 0;
}

/* Reads the code object at @addr and defines it in @core; NULL when it
 * cannot be read or is not a code object. */
static PyCodeEntry *
read_code (TideAttachPython   *self,
           TideCaptureProcess *core,
           guint64             addr)
{
  const TidePyLayout *layout = &self->layout;
  guint8 obj[CODE_HEADER_BYTES];
  g_autofree char *file = NULL, *name = NULL;
  PyCodeEntry *entry;
  TidePyCode *code;
  gint32 first_line;

  memset (obj, 0, sizeof obj);
  if (!read_exact (self->pid, addr, obj, code_header_bytes (layout)) ||
      field_u64 (obj, TIDE_PY311_OBJECT_TYPE) != self->code_type)
    return NULL;
  file = read_str (self->pid, layout, field_u64 (obj, layout->code_filename));
  name = read_str (self->pid, layout, field_u64 (obj, layout->code_name));
  if (file == NULL || name == NULL)
    return NULL;
  memcpy (&first_line, obj + layout->code_firstlineno, sizeof first_line);
  entry = g_new0 (PyCodeEntry, 1);
  entry->id = self->next_id++;
  entry->is_forward = is_forward_name (layout, name);
  entry->role = code_role (file, name);
  entry->first_switch = G_MAXINT32;
  entry->first_line = first_line;
  entry->n_units = code_units (self, obj);
  entry->linetable = read_bytes_object (self->pid, field_u64 (obj, layout->code_linetable),
                                        &entry->linetable_len);
  code = g_new0 (TidePyCode, 1);
  code->file = g_steal_pointer (&file);
  code->function = g_steal_pointer (&name);
  code->first_line = first_line;
  tide_capture_process_define_pycode (core, entry->id, code);
  g_hash_table_insert (self->codes, g_memdup2 (&addr, sizeof addr), entry);
  return entry;
}

/* The code object at @addr, read once; NULL: see read_code. */
static PyCodeEntry *
code_entry (TideAttachPython   *self,
            TideCaptureProcess *core,
            guint64             addr)
{
  PyCodeEntry *entry = g_hash_table_lookup (self->codes, &addr);

  return entry != NULL ? entry : read_code (self, core, addr);
}

/* The tagged frame (tide-wire.h) of @frame, or 0 when its code cannot be
 * named. */
static guint64
name_frame (TideAttachPython     *self,
            TideCaptureProcess   *core,
            const TideBpfPyFrame *frame,
            gboolean             *is_forward)
{
  PyCodeEntry *entry = code_entry (self, core, frame->code);
  gint line = 0;

  if (entry == NULL)
    return 0;
  *is_forward = entry->is_forward;
  /* Past the code: the frame is not what the code object says. */
  if (frame->instr >= -2 && frame->instr < entry->n_units * TIDE_PY311_CODE_UNIT)
    line = code_line (&self->layout, entry, frame->instr);
  return tide_wire_pyframe_pack (entry->id, line > 0 ? (guint32) line : 0);
}

/* The name of @obj's class (its type's tp_name: a class made in Python
 * has its bare name there), read once per object: the `self` of a forward
 * frame is a module, which lives as long as the model.  NULL when it
 * cannot be read. */
static const char *
class_of (TideAttachPython *self,
          guint64           obj)
{
  char *name = g_hash_table_lookup (self->classes, &obj);
  char buf[MAX_CLASS_NAME];
  guint64 type;
  gsize n;

  if (name == NULL)
    {
      type = read_u64 (self->pid, obj + TIDE_PY311_OBJECT_TYPE);
      n = type ? read_some (self->pid, read_u64 (self->pid, type + TIDE_PY311_TYPE_NAME), buf,
                            sizeof buf - 1) : 0;
      buf[n] = '\0';
      name = g_utf8_validate (buf, -1, NULL) ? g_strdup (buf) : g_strdup ("");
      g_hash_table_insert (self->classes, g_memdup2 (&obj, sizeof obj), name);
    }
  return name[0] != '\0' ? name : NULL;
}

/* The module scope of a stack: the classes of the `self` of its forward
 * frames, outermost first ("Net/DecoupledLinear"), defined in @core as
 * they are first met.  0: none. */
static guint32
module_scope (TideAttachPython   *self,
              TideCaptureProcess *core,
              const guint64      *selves,
              guint               n_selves)
{
  guint32 scope = 0;

  for (guint i = n_selves; i-- > 0;)
    {
      const char *name = class_of (self, selves[i]);
      g_autofree char *key = NULL;
      gpointer id;

      if (name == NULL)
        continue;
      key = g_strdup_printf ("%u/%s", scope, name);
      id = g_hash_table_lookup (self->scopes, key);
      if (id == NULL)
        {
          id = GUINT_TO_POINTER (self->next_scope++);
          tide_capture_process_define_scope (core, GPOINTER_TO_UINT (id), scope, name);
          g_hash_table_insert (self->scopes, g_steal_pointer (&key), id);
        }
      scope = GPOINTER_TO_UINT (id);
    }
  return scope;
}

gboolean
tide_attach_python_ends_step (TideAttachPython     *self,
                              TideCaptureProcess   *core,
                              const TideBpfPyFrame *py,
                              const __u64          *first_arg,
                              guint                 n_py)
{
  PyCodeEntry *entry = NULL;
  guint i, site = n_py;
  guint64 owner;

  /* The caller of torch.set_grad_enabled or of torch.no_grad(), and the
   * outermost grad_mode.py frame it called. */
  for (i = 0; i < n_py; i++)
    {
      if (py[i].flags & TIDE_BPF_PY_SHIM)
        continue;
      entry = code_entry (self, core, py[i].code);
      if (entry == NULL || entry->role != PY_CODE_GRAD_MODE)
        break;
      site = i;
    }
  if (i == n_py || entry == NULL)
    return FALSE;
  /* The frame whose offset tells the two switches apart, and the
   * optimizer: `_use_grad` switches and has it as `self`; `wrapper` calls
   * no_grad's decorate_context, which switches, and has it as args[0]. */
  if (entry->role == PY_CODE_USE_GRAD)
    {
      site = i;
      owner = py[i].first_local;
    }
  else if (entry->role == PY_CODE_STEP_WRAPPER && site < n_py)
    owner = first_arg[i];
  else
    return FALSE;
  /* Steps are those of the first optimizer seen, as record counts them. */
  if (self->step_owner == 0)
    self->step_owner = owner;
  if (owner != self->step_owner)
    return FALSE;
  /* Of the two switches, the one after the step comes later in the code:
   * a switch at the lowest offset seen so far is a step beginning. */
  if (py[site].instr <= entry->first_switch)
    {
      entry->first_switch = py[site].instr;
      return FALSE;
    }
  return TRUE;
}

static gboolean
is_eval (TideAttachPython *self,
         guint64           pc)
{
  /* A return address points after the call: look one byte back. */
  return pc - 1 >= self->eval_start && pc - 1 < self->eval_end;
}

guint
tide_attach_python_splice (TideAttachPython       *self,
                           TideCaptureProcess     *core,
                           const TideBpfUserStack *stack,
                           const guint64          *native,
                           guint                   n_native,
                           gboolean                complete,
                           guint64                *out,
                           guint                   max,
                           guint32                *scope)
{
  guint64 py[TIDE_BPF_PY_FRAMES], selves[MAX_SCOPE_DEPTH];
  gboolean entry[TIDE_BPF_PY_FRAMES];
  guint n_py = 0, next = 0, n = 0, n_selves = 0;

  /* The frames that can be named, up to the first that cannot.  A shim
   * (3.12+) is no Python frame: it says that the frame above it is its
   * evaluation's first. */
  for (guint i = 0; self != NULL && i < MIN (stack->n_py, TIDE_BPF_PY_FRAMES); i++)
    {
      gboolean is_forward = FALSE;

      if (stack->py[i].flags & TIDE_BPF_PY_SHIM)
        {
          if (n_py > 0)
            entry[n_py - 1] = TRUE;
          continue;
        }
      if ((py[n_py] = name_frame (self, core, &stack->py[i], &is_forward)) == 0)
        break;
      entry[n_py++] = (stack->py[i].flags & TIDE_BPF_PY_ENTRY) != 0;
      if (is_forward && stack->py[i].first_local != 0 && n_selves < MAX_SCOPE_DEPTH)
        selves[n_selves++] = stack->py[i].first_local;
    }
  *scope = n_selves > 0 ? module_scope (self, core, selves, n_selves) : 0;
  for (guint i = 0; i < n_native && n < max; i++)
    {
      if (next == n_py || !is_eval (self, native[i]))
        {
          out[n++] = native[i];
          continue;
        }
      while (next < n_py && n < max)
        {
          gboolean last = entry[next];

          out[n++] = py[next++];
          if (last)
            break;
        }
    }
  if (!complete && n < max)
    out[n++] = TIDE_STACK_FRAMES_MISSING;
  /* Evaluation frames that the native walk did not reach. */
  while (next < n_py && n < max)
    out[n++] = py[next++];
  return n;
}
