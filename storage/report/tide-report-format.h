/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * Text, CSV and JSON renderings of the reports.  CSV and JSON carry plain
 * numbers (bytes as integers, times in nanoseconds); text is for people.
 */
#pragma once

#include "tide-format-bytes.h"
#include "tide-report.h"

G_BEGIN_DECLS

typedef enum
{
  TIDE_FORMAT_TEXT,
  TIDE_FORMAT_CSV,
  TIDE_FORMAT_JSON,
} TideFormat;

typedef enum
{
  TIDE_GROUPS_SUSPECTS,
  TIDE_GROUPS_RETAINED,
} TideGroupsKind;

/* Which frames the text report prints under each stack. */
typedef enum
{
  TIDE_FRAMES_AROUND_HEADLINE,  /* the Python frames, and the native ones near the headline */
  TIDE_FRAMES_ALL,              /* every frame (--native) */
} TideFrameDetail;

gboolean tide_format_parse   (const char     *name,
                              TideFormat     *format);
/* A CSV field, quoted where it must be; a JSON string, or null for NULL. */
char    *tide_format_device    (gint            device);
void     tide_format_csv_text  (GString        *out,
                                const char     *text);
void     tide_format_json_text (GString        *out,
                                const char     *text);
/* A JSON member, "@key":@value, or "@key":null when @value is not @known;
 * the caller writes the comma before it. */
void     tide_format_json_int  (GString        *out,
                                const char     *key,
                                gboolean        known,
                                gint64          value);
void     tide_format_steps   (GString        *out,
                              GPtrArray      *rows,
                              TideFormat      format);
void     tide_format_groups  (GString        *out,
                              GPtrArray      *groups,
                              TideGroupsKind  kind,
                              TideGroupBy     by,
                              gint            step,
                              TideFormat      format);
void     tide_format_groups_detailed (GString         *out,
                                      GPtrArray       *groups,
                                      TideGroupsKind   kind,
                                      TideGroupBy      by,
                                      gint             step,
                                      TideFormat       format,
                                      TideFrameDetail  detail);

/* `report --suspects`: the stacks that grow steadily, then @classes, the
 * classes of resident memory that do (TideClassSuspect in
 * tide-report-rss.h; NULL: none).  In CSV and JSON a class is a row of the
 * stacks' shape without frames; every suspect ends in its kind ("stack" or
 * "class"), and a class's class, name and hint. */
void     tide_format_suspects (GString         *out,
                               GPtrArray       *groups,
                               GPtrArray       *classes,
                               TideGroupBy      by,
                               TideFormat       format,
                               TideFrameDetail  detail);

void     tide_format_processes (GString           *out,
                                GPtrArray         *summaries,
                                const TideJobPeak *peak,
                                TideFormat         format);

G_END_DECLS
