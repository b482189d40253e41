/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tide-symbol-cache.c: one text file per build-id:
 *
 *   tidemark-symbol-cache 2 <build-id> debug-file=yes|no
 *   <address, hex>\t<line>\t<function>\t<source file>[\t<function>\t<file>\t<line>]...
 *   ...
 *
 * Each optional triple is one level of inlined calls, innermost first
 * (TideSymbol.inlines).  Version 1 had no inline levels: its files fail the
 * header check, so they are read as empty and rewritten.
 *
 * Function and file are escaped with g_strescape(), so no tab or newline
 * survives inside them; an empty function means "no symbol", an empty file
 * "no source".  Text, so that a person can read what was cached.
 */
#include "config.h"

#include "tide-symbol-cache.h"

#include "tide-debuginfo.h"

#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <string.h>
#include <unistd.h>

#define CACHE_MAGIC         "tidemark-symbol-cache 2"
/* Bounds on what one file may hold; a file past them is not read. */
#define CACHE_MAX_BYTES     (64 * 1024 * 1024)
#define CACHE_MAX_ENTRIES   (1024 * 1024)

/* An entry read from a file lies in its Slab, its strings in the slab's
 * text (@read); one that the symbolizer added is allocated alone and owns
 * its strings. */
typedef struct
{
  guint64    address;  /* the key */
  TideSymbol symbol;
  gboolean   read;
} CacheEntry;

/* What one read of a file made: its text, in which the entries' strings
 * were cut and unescaped in place, and its entries in one block.  A big
 * library's file has tens of thousands of lines, read at every recording
 * and freed at its end: a few blocks, not an allocation per string. */
typedef struct
{
  char       *text;
  CacheEntry *entries;
  guint       n_entries;
} Slab;

/* Which version of a file on disk: every save makes a new inode (it
 * replaces the file by another), so a file with the stamp it had is the
 * file as it was. */
typedef struct
{
  gboolean exists;
  guint64  inode;
  gint64   size;
  gint64   mtime_sec;
  gint64   mtime_nsec;
} FileStamp;

typedef struct
{
  char       *header;   /* the first line this file must have */
  char       *path;     /* DIR/<build-id>.sym */
  GHashTable *entries;  /* &CacheEntry.address -> CacheEntry */
  GPtrArray  *slabs;    /* Slab: of the entries read */
  FileStamp   stamp;    /* of the file whose entries are in @entries */
  guint       n_unsaved;
} CacheFile;

struct _TideSymbolCache
{
  char       *dir;       /* NULL: disabled */
  GHashTable *by_path;   /* ELF path -> CacheFile (borrowed), or NULL: not cacheable */
  GHashTable *by_header; /* CacheFile.header -> CacheFile (owned) */
};

static void
cache_entry_free (gpointer data)
{
  CacheEntry *entry = data;

  if (entry->read)
    return;  /* its slab's */
  tide_symbol_clear (&entry->symbol);
  g_free (entry);
}

static void
slab_free (gpointer data)
{
  Slab *slab = data;

  for (guint i = 0; i < slab->n_entries; i++)
    g_free (slab->entries[i].symbol.inlines);
  g_free (slab->entries);
  g_free (slab->text);
  g_free (slab);
}

static void
cache_file_free (gpointer data)
{
  CacheFile *file = data;

  /* The entries first: they lie in the slabs. */
  g_hash_table_unref (file->entries);
  g_ptr_array_unref (file->slabs);
  g_free (file->path);
  g_free (file->header);
  g_free (file);
}

TideSymbolCache *
tide_symbol_cache_new (const char *dir)
{
  TideSymbolCache *self = g_new0 (TideSymbolCache, 1);

  self->dir = g_strdup (dir);
  self->by_path = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  self->by_header = g_hash_table_new_full (g_str_hash, g_str_equal, NULL, cache_file_free);
  return self;
}

void
tide_symbol_cache_free (TideSymbolCache *self)
{
  if (self == NULL)
    return;
  g_hash_table_unref (self->by_path);
  g_hash_table_unref (self->by_header);
  g_free (self->dir);
  g_free (self);
}

char *
tide_symbol_cache_default_dir (void)
{
  const char *override = g_getenv (TIDE_SYMBOL_CACHE_ENV);

  if (override != NULL)
    return override[0] != '\0' ? g_strdup (override) : NULL;
  return g_build_filename (g_get_user_cache_dir (), "tidemark", "symbols", NULL);
}

/* ---- reading ---------------------------------------------------------------- */

static FileStamp
file_stamp (const char *path)
{
  GStatBuf st;

  if (g_stat (path, &st) != 0)
    return (FileStamp) { FALSE, 0, 0, 0, 0 };
  return (FileStamp) { TRUE, st.st_ino, st.st_size, st.st_mtim.tv_sec, st.st_mtim.tv_nsec };
}

static gboolean
file_stamp_equal (const FileStamp *a,
                  const FileStamp *b)
{
  return a->exists == b->exists && a->inode == b->inode && a->size == b->size &&
         a->mtime_sec == b->mtime_sec && a->mtime_nsec == b->mtime_nsec;
}

/* g_strcompress() in place, which an escaped field allows: what it
 * stands for is never longer.  A backslash that ends the field is
 * dropped, as there. */
static void
unescape_in_place (char *field)
{
  static const char escaped[] = "bfnrtv", meant[] = "\b\f\n\r\t\v";
  char *out = field;

  for (const char *in = field; *in != '\0';)
    {
      const char *which;

      if (*in != '\\')
        {
          *out++ = *in++;
          continue;
        }
      if (*++in == '\0')
        break;
      if (*in >= '0' && *in <= '7')
        {
          guint value = 0;

          for (guint digits = 0; digits < 3 && *in >= '0' && *in <= '7'; digits++)
            value = value * 8 + (guint) (*in++ - '0');
          *out++ = (char) value;
          continue;
        }
      which = strchr (escaped, *in);
      *out++ = which != NULL ? meant[which - escaped] : *in;
      in++;
    }
  *out = '\0';
}

/* A field as a string of the slab's text: NULL when empty. */
static char *
field_in_place (char *field)
{
  if (field[0] == '\0')
    return NULL;
  if (strchr (field, '\\') != NULL)
    unescape_in_place (field);
  return field;
}

/* @text as a number in @base (10 or 16) of at most @max: digits only,
 * at least one. */
static gboolean
parse_number (const char *text,
              guint       base,
              guint64     max,
              guint64    *out)
{
  guint64 value = 0;

  if (*text == '\0')
    return FALSE;
  for (; *text != '\0'; text++)
    {
      gint digit = base == 16 ? g_ascii_xdigit_value (*text) : g_ascii_digit_value (*text);

      if (digit < 0 || value > (max - (guint64) digit) / base)
        return FALSE;
      value = value * base + (guint64) digit;
    }
  *out = value;
  return TRUE;
}

/* Bounds the inline levels of one entry, so a damaged file cannot ask for
 * much memory; compilers nest far fewer. */
#define CACHE_MAX_INLINES   256

static gboolean
parse_inlines (char       **fields,
               guint        n_levels,
               TideSymbol  *symbol)
{
  symbol->inlines = n_levels ? g_new0 (TideInlineLevel, n_levels) : NULL;
  symbol->n_inlines = n_levels;
  for (guint i = 0; i < n_levels; i++)
    {
      char **level = fields + 3 * i;
      guint64 lineno;

      if (!parse_number (level[2], 10, G_MAXINT, &lineno))
        return FALSE;
      symbol->inlines[i].function = field_in_place (level[0]);
      symbol->inlines[i].file = field_in_place (level[1]);
      symbol->inlines[i].line = (int) lineno;
    }
  return TRUE;
}

#define CACHE_MAX_FIELDS    (4 + 3 * CACHE_MAX_INLINES)

/* Cuts @line at its tabs, in place, into @fields; returns how many there
 * are, or CACHE_MAX_FIELDS + 1 when there are more than it allows. */
static guint
split_fields (char  *line,
              char **fields)
{
  guint n = 0;

  for (;;)
    {
      char *tab;

      if (n == CACHE_MAX_FIELDS)
        return CACHE_MAX_FIELDS + 1;
      fields[n++] = line;
      if ((tab = strchr (line, '\t')) == NULL)
        return n;
      *tab = '\0';
      line = tab + 1;
    }
}

/* Parses one "address\tline\tfunction\tfile[\tfunction\tfile\tline]..."
 * line of a slab's text into @entry; cuts @line up, and its strings stay
 * in it.  On failure, @entry holds at most its inline levels. */
static gboolean
parse_entry (char       *line,
             CacheEntry *entry)
{
  char *fields[CACHE_MAX_FIELDS];
  guint n_fields = split_fields (line, fields);
  guint64 lineno;

  if (n_fields < 4 || (n_fields - 4) % 3 != 0 || n_fields > CACHE_MAX_FIELDS ||
      !parse_number (fields[0], 16, G_MAXUINT64, &entry->address) ||
      !parse_number (fields[1], 10, G_MAXINT, &lineno))
    return FALSE;
  entry->read = TRUE;
  entry->symbol.function = field_in_place (fields[2]);
  entry->symbol.file = field_in_place (fields[3]);
  entry->symbol.line = (int) lineno;
  return parse_inlines (fields + 4, (n_fields - 4) / 3, &entry->symbol);
}

/* How many lines of @text end in a newline. */
static gsize
count_lines (const char *text,
             gsize       length)
{
  gsize n = 0;

  for (const char *end = text + length; (text = memchr (text, '\n', (gsize) (end - text))) != NULL;
       text++)
    n++;
  return n;
}

/* Reads the entries of the file at @path, which must start with @header,
 * into @entries, and gives the slab they lie in (to free after them).
 * Returns FALSE, with @entries possibly half filled, when the file is
 * missing, too large, written for another header, or does not parse. */
static gboolean
read_entries (const char  *path,
              const char  *header,
              GHashTable  *entries,
              Slab       **slab_out)
{
  Slab *slab = g_new0 (Slab, 1);
  gsize length, n_lines;
  char *line;
  char *next;

  *slab_out = slab;
  if (!g_file_get_contents (path, &slab->text, &length, NULL) ||
      length > CACHE_MAX_BYTES || strlen (slab->text) != length)
    return FALSE;
  n_lines = count_lines (slab->text, length);
  if (n_lines == 0 || n_lines - 1 > CACHE_MAX_ENTRIES)
    return FALSE;
  slab->entries = g_new0 (CacheEntry, n_lines - 1);

  line = slab->text;
  next = strchr (line, '\n');
  *next = '\0';
  if (strcmp (line, header) != 0)
    return FALSE;

  for (line = next + 1; *line != '\0'; line = next + 1)
    {
      CacheEntry *entry;

      /* Cut short: the last line has no end (and no entry counted). */
      if ((next = strchr (line, '\n')) == NULL)
        return FALSE;
      *next = '\0';
      entry = &slab->entries[slab->n_entries++];
      if (!parse_entry (line, entry))
        return FALSE;
      g_hash_table_replace (entries, &entry->address, entry);
    }
  return TRUE;
}

static GHashTable *
new_entry_table (void)
{
  return g_hash_table_new_full (g_int64_hash, g_int64_equal, NULL, cache_entry_free);
}

/* A cache file that must start with @header (taken), read from disk. */
static CacheFile *
cache_file_load (TideSymbolCache *self,
                 const char      *build_id,
                 char            *header)
{
  CacheFile *file = g_new0 (CacheFile, 1);
  g_autofree char *name = g_strconcat (build_id, ".sym", NULL);
  Slab *slab;

  file->header = header;
  file->path = g_build_filename (self->dir, name, NULL);
  file->entries = new_entry_table ();
  file->slabs = g_ptr_array_new_with_free_func (slab_free);
  /* Taken before the read: a file replaced in between is read again at
   * the save (merge_saved), never missed. */
  file->stamp = file_stamp (file->path);
  if (read_entries (file->path, file->header, file->entries, &slab))
    g_ptr_array_add (file->slabs, slab);
  else
    {
      g_hash_table_remove_all (file->entries);
      slab_free (slab);
    }
  return file;
}

/* The cache file for the ELF file @path, or NULL when it has no build-id. */
static CacheFile *
cache_file_for (TideSymbolCache *self,
                const char      *path)
{
  gpointer found;
  gboolean has_debug_file;
  g_autofree char *build_id = NULL;
  char *header;
  CacheFile *file;

  if (g_hash_table_lookup_extended (self->by_path, path, NULL, &found))
    return found;

  build_id = tide_debuginfo_identify (path, &has_debug_file);
  file = NULL;
  if (build_id != NULL)
    {
      header = g_strdup_printf (CACHE_MAGIC " %s debug-file=%s",
                                build_id, has_debug_file ? "yes" : "no");
      file = g_hash_table_lookup (self->by_header, header);
      if (file == NULL)
        {
          file = cache_file_load (self, build_id, header);
          g_hash_table_insert (self->by_header, file->header, file);
        }
      else
        g_free (header);
    }
  g_hash_table_insert (self->by_path, g_strdup (path), file);
  return file;
}

gboolean
tide_symbol_cache_lookup (TideSymbolCache *self,
                          const char      *path,
                          guint64          elf_address,
                          TideSymbol      *out)
{
  CacheFile *file;
  const CacheEntry *entry;

  g_return_val_if_fail (self != NULL, FALSE);
  g_return_val_if_fail (out != NULL, FALSE);

  memset (out, 0, sizeof *out);
  if (self->dir == NULL || path == NULL || (file = cache_file_for (self, path)) == NULL)
    return FALSE;
  if ((entry = g_hash_table_lookup (file->entries, &elf_address)) == NULL)
    return FALSE;

  tide_symbol_copy (out, &entry->symbol);
  return TRUE;
}

void
tide_symbol_cache_add (TideSymbolCache  *self,
                       const char       *path,
                       guint64           elf_address,
                       const TideSymbol *symbol)
{
  CacheFile *file;
  CacheEntry *entry;

  g_return_if_fail (self != NULL);
  g_return_if_fail (symbol != NULL);

  if (self->dir == NULL || path == NULL || (file = cache_file_for (self, path)) == NULL ||
      g_hash_table_size (file->entries) >= CACHE_MAX_ENTRIES)
    return;

  entry = g_new0 (CacheEntry, 1);
  entry->address = elf_address;
  if (symbol->function != NULL)
    tide_symbol_copy (&entry->symbol, symbol);
  g_hash_table_replace (file->entries, &entry->address, entry);
  file->n_unsaved++;
}

gboolean
tide_symbol_cache_resolve (TideSymbolCache *self,
                           TideSymbolizer  *symbolizer,
                           const char      *path,
                           guint64          elf_address,
                           TideSymbol      *out)
{
  if (tide_symbol_cache_lookup (self, path, elf_address, out))
    return TRUE;
  tide_symbolizer_lookup (symbolizer, path, elf_address, out);
  tide_symbol_cache_add (self, path, elf_address, out);
  return FALSE;
}

/* ---- writing ---------------------------------------------------------------- */

static int
compare_entries (gconstpointer a,
                 gconstpointer b)
{
  const CacheEntry *x = *(const CacheEntry *const *) a;
  const CacheEntry *y = *(const CacheEntry *const *) b;

  return x->address < y->address ? -1 : x->address > y->address;
}

/* Whether g_strescape() would change @field: it escapes quotes,
 * backslashes, control characters and every byte past ASCII. */
static gboolean
needs_escape (const char *field)
{
  for (const guchar *c = (const guchar *) field; *c != '\0'; c++)
    if (*c < ' ' || *c >= 0x7f || *c == '\\' || *c == '"')
      return TRUE;
  return FALSE;
}

static void
append_escaped (GString    *out,
                const char *field)
{
  g_string_append_c (out, '\t');
  if (field == NULL)
    return;
  if (needs_escape (field))
    {
      g_autofree char *escaped = g_strescape (field, NULL);
      g_string_append (out, escaped);
    }
  else
    g_string_append (out, field);
}

static GString *
serialize (const CacheFile *file)
{
  g_autoptr (GPtrArray) sorted = g_ptr_array_sized_new (g_hash_table_size (file->entries));
  GString *out = g_string_new (file->header);
  GHashTableIter iter;
  gpointer value;

  g_hash_table_iter_init (&iter, file->entries);
  while (g_hash_table_iter_next (&iter, NULL, &value))
    g_ptr_array_add (sorted, value);
  g_string_append_c (out, '\n');
  g_ptr_array_sort (sorted, compare_entries);
  for (guint i = 0; i < sorted->len; i++)
    {
      const CacheEntry *entry = sorted->pdata[i];

      char number[48];

      /* Formatted on the stack: g_string_append_printf allocates. */
      g_snprintf (number, sizeof number, "%" G_GINT64_MODIFIER "x\t%d", entry->address,
                  entry->symbol.line);
      g_string_append (out, number);
      append_escaped (out, entry->symbol.function);
      append_escaped (out, entry->symbol.file);
      for (guint l = 0; l < entry->symbol.n_inlines; l++)
        {
          append_escaped (out, entry->symbol.inlines[l].function);
          append_escaped (out, entry->symbol.inlines[l].file);
          g_snprintf (number, sizeof number, "\t%d", entry->symbol.inlines[l].line);
          g_string_append (out, number);
        }
      g_string_append_c (out, '\n');
    }
  return out;
}

/* Takes in what another recorder saved since @file was read; ours win.
 * A file that nobody replaced since holds nothing new, and reading a big
 * library's file again lay on the wall time of every recording's end. */
static void
merge_saved (CacheFile *file)
{
  g_autoptr (GHashTable) saved = NULL;
  FileStamp now = file_stamp (file->path);
  GHashTableIter iter;
  CacheEntry *entry;
  Slab *slab;

  if (file_stamp_equal (&now, &file->stamp))
    return;
  saved = new_entry_table ();
  if (!read_entries (file->path, file->header, saved, &slab))
    {
      g_hash_table_remove_all (saved);
      slab_free (slab);
      return;
    }
  /* The entries taken lie in it. */
  g_ptr_array_add (file->slabs, slab);
  g_hash_table_iter_init (&iter, saved);
  while (g_hash_table_iter_next (&iter, NULL, (gpointer *) &entry))
    {
      if (g_hash_table_size (file->entries) >= CACHE_MAX_ENTRIES)
        break;
      if (g_hash_table_contains (file->entries, &entry->address))
        continue;
      g_hash_table_iter_steal (&iter);
      g_hash_table_insert (file->entries, &entry->address, entry);
    }
}

/* Replaces @path by a file of @contents at once, through a file of its
 * own beside it, so that another recorder reads the old cache or the new
 * one, never half of one.  Without an fsync, which waited for the disk at
 * the end of every recording: a cache that a crash leaves short or empty
 * is only read as empty (read_entries) and written again.  Sets @stamp to
 * the new file's. */
static gboolean
replace_file (const char  *path,
              const char  *contents,
              gsize        length,
              FileStamp   *stamp,
              GError     **error)
{
  g_autofree char *temp = g_strconcat (path, ".XXXXXX", NULL);
  int fd = g_mkstemp_full (temp, O_RDWR | O_CLOEXEC, 0644);
  int saved_errno;

  if (fd < 0)
    {
      saved_errno = errno;
      g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (saved_errno),
                   "cannot create a file beside %s: %s", path, g_strerror (saved_errno));
      return FALSE;
    }
  close (fd);
  if (!g_file_set_contents_full (temp, contents, (gssize) length, G_FILE_SET_CONTENTS_NONE,
                                 0644, error))
    {
      g_unlink (temp);
      return FALSE;
    }
  *stamp = file_stamp (temp);
  if (g_rename (temp, path) != 0)
    {
      saved_errno = errno;
      g_unlink (temp);
      g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (saved_errno),
                   "cannot replace %s: %s", path, g_strerror (saved_errno));
      return FALSE;
    }
  return TRUE;
}

static gboolean
cache_file_save (CacheFile  *file,
                 GError    **error)
{
  g_autoptr (GString) contents = NULL;

  merge_saved (file);
  contents = serialize (file);
  if (!replace_file (file->path, contents->str, contents->len, &file->stamp, error))
    return FALSE;
  file->n_unsaved = 0;
  return TRUE;
}

gboolean
tide_symbol_cache_save (TideSymbolCache  *self,
                        GError          **error)
{
  GHashTableIter iter;
  CacheFile *file;
  gboolean created = FALSE;

  g_return_val_if_fail (self != NULL, FALSE);

  g_hash_table_iter_init (&iter, self->by_header);
  while (g_hash_table_iter_next (&iter, NULL, (gpointer *) &file))
    {
      if (file->n_unsaved == 0)
        continue;
      if (!created && g_mkdir_with_parents (self->dir, 0700) != 0)
        {
          int saved_errno = errno;

          g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (saved_errno),
                       "cannot create %s: %s", self->dir, g_strerror (saved_errno));
          return FALSE;
        }
      created = TRUE;
      if (!cache_file_save (file, error))
        return FALSE;
    }
  return TRUE;
}
