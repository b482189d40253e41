/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 */
#include "config.h"

#include "tide-debuginfo.h"
#include "tide-hash.h"
#include "tide-schema.h"
#include "tide-stack-table.h"
#include "tide-symbol-cache.h"
#include "tide-symbolizer.h"
#include "tide-wire.h"

typedef struct
{
  const char       *path;   /* interned; NULL when no mapping held the address */
  guint64           offset; /* return address in the file's vaddr space, or the pc */
  TideAddressSpace *space;  /* for an unresolved pc only: whose pc it is */
} FrameKey;

/* New frames gathered before the symbolizer is woken for them; fewer wait
 * for the recording's next poll tick (tide_stack_table_send_frames()). */
#define SYMBOLIZE_BATCH_FRAMES 256

/* A pc no mapping held when it was first seen: the object may be announced
 * later (a library still inside dlopen when it allocated, whose MAPPING
 * comes after).  It is resolved again when its process is done. */
typedef struct
{
  gint64            id;
  TideAddressSpace *space;
  guint64           pc;
} PendingFrame;

/* A stack: its frame ids, outermost first.  Kept whole, as the trace
 * keeps it: a tree of nodes took an insert for every frame that no stack
 * before had under the same callers, most frames of a PyTorch sample. */
typedef struct
{
  guint64 hash;
  guint   n_frames;
  gint64  frame_ids[];
} StackKey;

typedef struct
{
  gint64      id;
  const char *path;
  guint64     offset;
} FrameJob;

struct _TideStackTable
{
  TideTraceWriter *writer;
  GHashTable      *frames;   /* FrameKey* -> id */
  GHashTable      *stacks;   /* StackKey* -> id */
  GArray          *scratch;  /* gint64: the frame ids of a stack being interned */
  GByteArray      *probe;    /* the StackKey of the stack being looked up */
  GHashTable      *pyframes; /* "file\nfunction\nline" -> id */
  GPtrArray       *key_blocks; /* where the keys of frames and stacks live */
  gsize            key_block_used;
  gint64           next_frame_id;
  gint64           next_stack_id;

  GArray          *pending;  /* PendingFrame */

  GThread         *symbolizer_thread;
  GAsyncQueue     *jobs;     /* GArray* of FrameJob; a job with id 0 stops the thread */
  GArray          *batch;    /* FrameJob: the new frames of the stack being interned */
  char            *symbol_cache_dir;

  /* The symbolizer thread says when its last frame is written: it saves
   * the symbol cache after that, while the trace's writer finishes. */
  GMutex           frames_lock;
  GCond            frames_cond;
  gboolean         frames_written;  /* guarded by frames_lock */
  gboolean         stop_sent;
};

static guint
frame_key_hash (gconstpointer p)
{
  const FrameKey *k = p;
  return (guint) tide_hash_ids ((guintptr) k->path, k->offset, (guintptr) k->space);
}

static gboolean
frame_key_equal (gconstpointer a,
                 gconstpointer b)
{
  const FrameKey *x = a, *y = b;
  return x->path == y->path && x->offset == y->offset && x->space == y->space;
}

static guint
stack_key_hash (gconstpointer p)
{
  return (guint) ((const StackKey *) p)->hash;
}

static gboolean
stack_key_equal (gconstpointer a,
                 gconstpointer b)
{
  const StackKey *x = a, *y = b;

  return x->hash == y->hash && x->n_frames == y->n_frames &&
         memcmp (x->frame_ids, y->frame_ids, x->n_frames * sizeof (gint64)) == 0;
}

static void
write_frame (TideTraceWriter *writer,
             const FrameJob  *job,
             const TideSymbol *symbol)
{
  TideFrameRow row = {
    .id = job->id,
    .kind = job->path == NULL && job->offset == TIDE_STACK_FRAMES_MISSING
            ? TIDE_FRAME_MISSING : TIDE_FRAME_NATIVE,
    .function = symbol ? symbol->function : NULL,
    .file = symbol ? symbol->file : NULL,
    .line = symbol ? symbol->line : 0,
    .module = job->path,
    .module_offset = (gint64) job->offset,
  };

  tide_trace_writer_add_frame (writer, &row);
}

/* The symbol's inline levels become frames of their own, innermost first
 * in id order, tied to the native frame by its module and offset. */
static void
write_inline_frames (TideTraceWriter  *writer,
                     const FrameJob   *job,
                     const TideSymbol *symbol,
                     gint64           *next_inline_id)
{
  for (guint i = 0; i < symbol->n_inlines; i++)
    {
      TideFrameRow row = {
        .id = (*next_inline_id)++,
        .kind = TIDE_FRAME_INLINE,
        .function = symbol->inlines[i].function,
        .file = symbol->inlines[i].file,
        .line = symbol->inlines[i].line,
        .module = job->path,
        .module_offset = (gint64) job->offset,
      };

      tide_trace_writer_add_frame (writer, &row);
    }
}

/* Each module's build-id, once, so that a merge of traces from several
 * nodes knows the same library under another path (tide-trace-merge.h). */
static void
write_module_once (TideTraceWriter *writer,
                   GHashTable      *seen,
                   const char      *path)
{
  g_autofree char *build_id = NULL;
  gboolean has_debug_file;

  if (path == NULL || g_hash_table_contains (seen, path))
    return;
  g_hash_table_add (seen, g_strdup (path));
  build_id = tide_debuginfo_identify (path, &has_debug_file);
  if (build_id != NULL)
    tide_trace_writer_add_module (writer, path, build_id);
}

static void
symbolize_job (TideStackTable  *self,
               const FrameJob  *job,
               TideSymbolizer  *symbolizer,
               TideSymbolCache *cache,
               GHashTable      *modules,
               gint64          *next_inline_id)
{
  TideSymbol symbol = { 0 };

  /* A return address points after the call; the call is one byte back. */
  if (job->path != NULL && job->offset > 0)
    tide_symbol_cache_resolve (cache, symbolizer, job->path, job->offset - 1, &symbol);
  write_module_once (self->writer, modules, job->path);
  write_frame (self->writer, job, symbol.function != NULL ? &symbol : NULL);
  write_inline_frames (self->writer, job, &symbol, next_inline_id);
  tide_symbol_clear (&symbol);
}

static gpointer
symbolizer_thread_main (gpointer data)
{
  TideStackTable *self = data;
  g_autoptr(TideSymbolizer) symbolizer = tide_symbolizer_new ();
  g_autoptr(TideSymbolCache) cache = tide_symbol_cache_new (self->symbol_cache_dir);
  g_autoptr(GError) error = NULL;
  gint64 next_inline_id = TIDE_INLINE_FRAME_ID_BASE;
  g_autoptr(GHashTable) modules = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);

  for (gboolean stop = FALSE; !stop;)
    {
      g_autoptr(GArray) batch = g_async_queue_pop (self->jobs);

      for (guint i = 0; i < batch->len && !stop; i++)
        {
          const FrameJob *job = &g_array_index (batch, FrameJob, i);

          if (job->id == 0)
            stop = TRUE;
          else
            symbolize_job (self, job, symbolizer, cache, modules, &next_inline_id);
        }
    }
  g_mutex_lock (&self->frames_lock);
  self->frames_written = TRUE;
  g_cond_signal (&self->frames_cond);
  g_mutex_unlock (&self->frames_lock);
  /* A cache that cannot be written only costs the next recording time. */
  if (!tide_symbol_cache_save (cache, &error))
    g_debug ("symbol cache not saved: %s", error->message);
  return NULL;
}

TideStackTable *
tide_stack_table_new (TideTraceWriter *writer,
                      const char      *symbol_cache_dir)
{
  TideStackTable *self = g_new0 (TideStackTable, 1);

  self->writer = writer;
  self->symbol_cache_dir = g_strdup (symbol_cache_dir);
  self->frames = g_hash_table_new (frame_key_hash, frame_key_equal);
  self->stacks = g_hash_table_new (stack_key_hash, stack_key_equal);
  self->scratch = g_array_new (FALSE, FALSE, sizeof (gint64));
  self->probe = g_byte_array_new ();
  self->key_blocks = g_ptr_array_new_with_free_func (g_free);
  self->pyframes = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  self->next_frame_id = 1;
  self->next_stack_id = 1;
  self->jobs = g_async_queue_new ();
  self->batch = g_array_new (FALSE, FALSE, sizeof (FrameJob));
  self->pending = g_array_new (FALSE, FALSE, sizeof (PendingFrame));
  g_mutex_init (&self->frames_lock);
  g_cond_init (&self->frames_cond);
  self->symbolizer_thread = g_thread_new ("tide-symbolizer", symbolizer_thread_main, self);
  return self;
}

static void
push_job (TideStackTable *self,
          gint64          id,
          const char     *path,
          guint64         offset)
{
  FrameJob job = { id, path, offset };

  g_array_append_val (self->batch, job);
}

/* The new frames go to the symbolizer in batches: a push wakes its thread,
 * and while a program imports its libraries nearly every stack brings new
 * frames. */
static void
send_jobs (TideStackTable *self)
{
  if (self->batch->len == 0)
    return;
  g_async_queue_push (self->jobs, g_steal_pointer (&self->batch));
  self->batch = g_array_new (FALSE, FALSE, sizeof (FrameJob));
}

/**
 * tide_stack_table_send_frames:
 *
 * Hands the new frames gathered so far to the symbolizer; the recording
 * calls it at each tick of its poll, so that a frame waits at most that
 * long to be symbolized and written.
 */
void
tide_stack_table_send_frames (TideStackTable *self)
{
  send_jobs (self);
}

/* Resolves the pending pcs of @space with the mappings it has now, and
 * sends them to the symbolizer; call it before @space goes away.  With
 * @space NULL, every pending pc is written as it is. */
void
tide_stack_table_resolve_pending (TideStackTable   *self,
                                  TideAddressSpace *space)
{
  for (guint i = self->pending->len; i-- > 0;)
    {
      PendingFrame *p = &g_array_index (self->pending, PendingFrame, i);
      const char *path = NULL;
      guint64 bias = 0;

      if (space != NULL && p->space != space)
        continue;
      if (space != NULL && tide_address_space_resolve (space, p->pc, &path, &bias))
        push_job (self, p->id, path, p->pc - bias);
      else
        push_job (self, p->id, NULL, p->pc);
      g_array_remove_index_fast (self->pending, i);
    }
  send_jobs (self);
}

/**
 * tide_stack_table_finish_frames:
 *
 * Waits until every frame is symbolized and handed to the writer; nothing
 * may be interned after it.  The symbol cache is saved afterwards, on the
 * symbolizer's thread, until tide_stack_table_free().
 */
void
tide_stack_table_finish_frames (TideStackTable *self)
{
  g_return_if_fail (self != NULL);

  if (self->stop_sent)
    return;
  tide_stack_table_resolve_pending (self, NULL);
  self->stop_sent = TRUE;
  push_job (self, 0, NULL, 0);
  send_jobs (self);
  g_mutex_lock (&self->frames_lock);
  while (!self->frames_written)
    g_cond_wait (&self->frames_cond, &self->frames_lock);
  g_mutex_unlock (&self->frames_lock);
}

/* Waits for every frame to be symbolized and written, and for the symbol
 * cache to be saved. */
void
tide_stack_table_free (TideStackTable *self)
{
  if (self == NULL)
    return;
  tide_stack_table_finish_frames (self);
  g_array_unref (self->pending);
  g_thread_join (self->symbolizer_thread);
  g_mutex_clear (&self->frames_lock);
  g_cond_clear (&self->frames_cond);
  g_async_queue_unref (self->jobs);
  g_array_unref (self->batch);
  g_hash_table_unref (self->frames);
  g_hash_table_unref (self->stacks);
  g_array_unref (self->scratch);
  g_byte_array_unref (self->probe);
  g_ptr_array_unref (self->key_blocks);
  g_hash_table_unref (self->pyframes);
  g_free (self->symbol_cache_dir);
  g_free (self);
}

#define KEY_BLOCK_BYTES 65536

/* A copy of @key, kept until the table is freed.  Keys are kept in blocks
 * freed whole: a long recording interns millions of frames, and freeing
 * them one by one was a fair part of the recorder's finish, after the
 * program has ended. */
static gpointer
keep_key (TideStackTable *self,
          gconstpointer   key,
          gsize           size)
{
  guint8 *block = self->key_blocks->len > 0
                  ? g_ptr_array_index (self->key_blocks, self->key_blocks->len - 1) : NULL;
  gsize room = (size + 7) & ~(gsize) 7;  /* the next key stays aligned */
  gpointer copy;

  /* A key larger than a block (a stack of thousands of frames) gets a
   * block of its own, before the one being filled. */
  if (room > KEY_BLOCK_BYTES / 4)
    {
      copy = g_memdup2 (key, size);
      g_ptr_array_insert (self->key_blocks, MAX ((gint) self->key_blocks->len - 1, 0), copy);
      return copy;
    }
  if (block == NULL || self->key_block_used + room > KEY_BLOCK_BYTES)
    {
      block = g_malloc (KEY_BLOCK_BYTES);
      g_ptr_array_add (self->key_blocks, block);
      self->key_block_used = 0;
    }
  copy = block + self->key_block_used;
  memcpy (copy, key, size);
  self->key_block_used += room;
  return copy;
}

static gint64
intern_frame (TideStackTable   *self,
              TideAddressSpace *space,
              guint64           pc)
{
  FrameKey key = { NULL, pc, NULL };
  gboolean missing = pc == TIDE_STACK_FRAMES_MISSING;
  const char *path;
  guint64 bias;
  gpointer id;

  if (!missing && tide_address_space_resolve (space, pc, &path, &bias))
    {
      key.path = path;  /* already interned by the address space */
      key.offset = pc - bias;
    }
  else if (!missing)
    key.space = space;
  id = g_hash_table_lookup (self->frames, &key);
  if (id != NULL)
    return GPOINTER_TO_SIZE (id);

  g_hash_table_insert (self->frames, keep_key (self, &key, sizeof key),
                       GSIZE_TO_POINTER (self->next_frame_id));
  if (key.space != NULL)
    {
      PendingFrame p = { self->next_frame_id, space, pc };
      g_array_append_val (self->pending, p);
    }
  else
    push_job (self, self->next_frame_id, key.path, key.offset);
  return self->next_frame_id++;
}

void
tide_py_code_free (TidePyCode *code)
{
  if (code == NULL)
    return;
  g_free (code->file);
  g_free (code->function);
  g_clear_pointer (&code->frame_ids, g_hash_table_unref);
  g_free (code);
}

/* The frame id of @file, @function and @line: Python frames are complete
 * when they arrive, written at once, shared by every process that runs the
 * same file, function and line. */
static gint64
intern_pyframe_named (TideStackTable *self,
                      const char     *file,
                      const char     *function,
                      gint            line)
{
  /* Most keys fit on the stack: a lookup that finds its frame then
   * allocates nothing. */
  char small[256];
  g_autofree char *large = NULL;
  char *key = small;
  gpointer id;
  TideFrameRow row;

  if ((gsize) g_snprintf (small, sizeof small, "%s\n%s\n%d", file, function, line) >= sizeof small)
    key = large = g_strdup_printf ("%s\n%s\n%d", file, function, line);
  id = g_hash_table_lookup (self->pyframes, key);
  if (id != NULL)
    return GPOINTER_TO_SIZE (id);
  g_hash_table_insert (self->pyframes, key == large ? g_steal_pointer (&large) : g_strdup (key),
                       GSIZE_TO_POINTER (self->next_frame_id));
  row = (TideFrameRow) { .id = self->next_frame_id, .kind = TIDE_FRAME_PYTHON,
                         .function = function, .file = file, .line = line };
  tide_trace_writer_add_frame (self->writer, &row);
  return self->next_frame_id++;
}

/* A process's Python frame: its code's lines remember their frame ids, so
 * that the frames seen again, nearly all of them, cost two integer
 * lookups rather than a formatted key. */
static gint64
intern_pyframe (TideStackTable *self,
                GHashTable     *pycodes,
                guint64         tagged)
{
  TidePyCode *code = pycodes ? g_hash_table_lookup (pycodes,
                                                    GUINT_TO_POINTER (tide_wire_pyframe_id (tagged)))
                             : NULL;
  gint line = (gint) tide_wire_pyframe_line (tagged);
  gpointer id;

  if (code == NULL)
    return intern_pyframe_named (self, "?", "?", line);
  if (code->frame_ids == NULL)
    code->frame_ids = g_hash_table_new (g_direct_hash, g_direct_equal);
  id = g_hash_table_lookup (code->frame_ids, GINT_TO_POINTER (line));
  if (id == NULL)
    {
      id = GSIZE_TO_POINTER (intern_pyframe_named (self, code->file, code->function, line));
      g_hash_table_insert (code->frame_ids, GINT_TO_POINTER (line), id);
    }
  return GPOINTER_TO_SIZE (id);
}

/* @return_addresses are innermost first; the tree is built from the
 * outermost frame down, so callers shared by many stacks are stored once. */
gint64
tide_stack_table_intern (TideStackTable   *self,
                         TideAddressSpace *space,
                         const guint64    *return_addresses,
                         guint             n_frames)
{
  return tide_stack_table_intern_mixed (self, space, NULL, return_addresses, n_frames);
}

/* The frame id of @frame, a return address or a Python frame. */
static gint64
intern_any_frame (TideStackTable   *self,
                  TideAddressSpace *space,
                  GHashTable       *pycodes,
                  guint64           frame)
{
  return tide_wire_is_pyframe (frame) ? intern_pyframe (self, pycodes, frame)
                                      : intern_frame (self, space, frame);
}

/* The id of the stack of @frame_ids (outermost first), written to the
 * trace when it is new. */
static gint64
intern_frame_ids (TideStackTable *self,
                  const gint64   *frame_ids,
                  guint           n_frames)
{
  gsize size = sizeof (StackKey) + n_frames * sizeof (gint64);
  StackKey *key;
  gpointer id;

  g_byte_array_set_size (self->probe, size);
  key = (StackKey *) (gpointer) self->probe->data;
  key->hash = n_frames;
  key->n_frames = n_frames;
  for (guint i = 0; i < n_frames; i++)
    key->hash = tide_hash_mix (key->hash, (guint64) (key->frame_ids[i] = frame_ids[i]));
  id = g_hash_table_lookup (self->stacks, key);
  if (id == NULL)
    {
      id = GSIZE_TO_POINTER (self->next_stack_id++);
      g_hash_table_insert (self->stacks, keep_key (self, key, size), id);
      tide_trace_writer_add_stack (self->writer, GPOINTER_TO_SIZE (id), frame_ids, n_frames);
    }
  return GPOINTER_TO_SIZE (id);
}

gint64
tide_stack_table_intern_mixed (TideStackTable   *self,
                               TideAddressSpace *space,
                               GHashTable       *pycodes,
                               const guint64    *return_addresses,
                               guint             n_frames)
{
  return tide_stack_table_intern_path (self, space, pycodes, return_addresses, n_frames, 0,
                                       self->scratch);
}

gint64
tide_stack_table_intern_path (TideStackTable   *self,
                              TideAddressSpace *space,
                              GHashTable       *pycodes,
                              const guint64    *frames,
                              guint             n_frames,
                              guint             n_known,
                              GArray           *path)
{
  g_return_val_if_fail (n_known <= MIN (n_frames, path->len), 0);

  g_array_set_size (path, n_known);
  for (guint depth = n_known; depth < n_frames; depth++)
    {
      gint64 frame_id = intern_any_frame (self, space, pycodes, frames[n_frames - 1 - depth]);

      g_array_append_val (path, frame_id);
    }
  if (self->batch->len >= SYMBOLIZE_BATCH_FRAMES)
    send_jobs (self);
  if (n_frames == 0)
    return 0;
  return intern_frame_ids (self, (const gint64 *) (gpointer) path->data, n_frames);
}

guint
tide_stack_table_get_n_frames (TideStackTable *self)
{
  return g_hash_table_size (self->frames);
}
