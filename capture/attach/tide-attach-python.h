/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tide-attach-python.h: the CPython interpreter of a process that `tidemark
 * attach` follows.  At attach time it finds the interpreter in the
 * process's mappings and its _PyRuntime in the ELF symbols, and gives the
 * BPF program where to read thread states and frames (TideBpfPyTarget).
 * At each sample it names the code objects that the BPF program found, by
 * reading them from the process once each, and splices the Python frames
 * into the native stack as `record` does: each C frame of the evaluation
 * loop stands for the Python frames it ran, up to and including its entry
 * frame.
 */
#pragma once

#include <sys/types.h>

#include <linux/types.h>

#include <glib.h>

#include "tide-attach-event.h"
#include "tide-capture-process.h"

G_BEGIN_DECLS

typedef struct _TideAttachPython TideAttachPython;

/* The interpreter of @pid, with @target filled for the BPF program, or
 * NULL: then *@message is NULL where the process runs no Python, else one
 * line that says why its Python frames cannot be read (an unsupported
 * version, a build without the symbols, thread states that do not agree
 * with the layout).  An interpreter without a thread state yet (a python
 * seen at its exec) is returned unconfirmed (tide_attach_python_confirm). */
TideAttachPython *tide_attach_python_new    (pid_t                    pid,
                                             TideBpfPyTarget         *target,
                                             char                   **message);
void              tide_attach_python_free   (TideAttachPython        *self);

/* TRUE once the process's thread states agree with the layout; FALSE with
 * *@message NULL while its interpreter has none yet, FALSE with one line
 * in *@message when they disagree: then its frames must not be read. */
gboolean          tide_attach_python_confirm (TideAttachPython       *self,
                                              char                  **message);

/* @native (@n_native frames, innermost first, as the unwinder gave them)
 * with the Python frames of @stack in place of the evaluation loop's
 * frames, into @out (room for @max).  @complete: the native walk reached
 * the thread's first frame; when it did not, a "frames missing" frame
 * follows the native frames, and the Python frames that no evaluation
 * frame was found for go above it.  Code objects are defined in @core's
 * Python codes as they are first met.  *@scope: the local id of the module
 * scope of the stack in @core (the classes of its forward frames' `self`),
 * 0 for none.  Returns the number of frames. */
guint             tide_attach_python_splice (TideAttachPython       *self,
                                             TideCaptureProcess     *core,
                                             const TideBpfUserStack *stack,
                                             const guint64          *native,
                                             guint                   n_native,
                                             gboolean                complete,
                                             guint64                *out,
                                             guint                   max,
                                             guint32                *scope);

/* TRUE when a switch of PyTorch's grad mode made under the Python frames
 * @py (@n_py of them, innermost first, with the first items of their
 * first locals @first_arg, as a TideBpfGradMode has them) ends a step of
 * a torch.optim optimizer: the switch back that its step() makes once its
 * work is done, of the first optimizer that steps.  `with
 * torch.no_grad():` blocks, a user's own `@torch.no_grad()` functions
 * and anything else are not. */
gboolean          tide_attach_python_ends_step (TideAttachPython     *self,
                                                TideCaptureProcess   *core,
                                                const TideBpfPyFrame *py,
                                                const __u64          *first_arg,
                                                guint                 n_py);

/* The line that a 3.11+ location table (co_linetable, @len bytes) gives for
 * the instruction at byte offset @offset of a code object that starts at
 * @first_line; @first_line for an offset below 0 (a frame that has not
 * started), 0 where the table says none or is damaged. */
gint              tide_attach_python_line   (const guint8           *table,
                                             gsize                   len,
                                             gint                    first_line,
                                             gint                    offset);

/* The same from a 3.8 or 3.9 co_lnotab ... */
gint              tide_attach_python_line_lnotab (const guint8      *table,
                                                  gsize              len,
                                                  gint               first_line,
                                                  gint               offset);

/* ... and from a 3.10 co_linetable. */
gint              tide_attach_python_line_310 (const guint8         *table,
                                               gsize                 len,
                                               gint                  first_line,
                                               gint                  offset);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (TideAttachPython, tide_attach_python_free)

G_END_DECLS
