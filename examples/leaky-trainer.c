/* SPDX-License-Identifier: MIT
 * Copyright 2026 The Tidemark authors
 *
 * leaky-trainer: the example to run first.
 *
 *   tidemark record -o trainer.tide -- leaky-trainer
 *   tidemark report trainer.tide --suspects
 *
 * A toy "training loop" in plain C: 12 steps of load batch → encoder →
 * decoder → loss → backward → optimizer, with the scopes a framework would
 * report.  It has the classic mistake of training code: from step 3 on, a
 * metrics hook keeps a copy of the encoder's activations "for later
 * plotting" (record_activation_history), so 2 MiB per step is never freed.
 * Everything else is allocated and freed within its step.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tidemark.h"

#define N_STEPS            12
#define BATCH              64
#define HIDDEN             8192     /* one activation tensor: 64 × 8192 floats = 2 MiB */
#define HISTORY_FROM_STEP  3
#define LEARNING_RATE      1.0f

#define NOINLINE __attribute__ ((noinline))

typedef struct
{
  size_t  n;
  float  *data;
} Tensor;

typedef struct
{
  Tensor encoder_weights;  /* one weight per hidden unit */
  Tensor decoder_weights;
} Model;

/* The mistake: every step's activations, kept forever. */
static Tensor *activation_history;
static size_t history_len;

static Tensor
tensor_new (size_t n)
{
  Tensor t = { n, malloc (n * sizeof (float)) };

  if (t.data == NULL)
    {
      fprintf (stderr, "out of memory\n");
      exit (1);
    }
  return t;
}

static void
tensor_free (Tensor *t)
{
  free (t->data);
  t->data = NULL;
}

/* softsign: a tanh-like squashing that needs no libm. */
static float
squash (float x)
{
  return x / (1.0f + (x < 0 ? -x : x));
}

NOINLINE static Tensor
load_batch (int step)
{
  Tensor batch = tensor_new ((size_t) BATCH * HIDDEN);

  for (size_t i = 0; i < batch.n; i++)
    batch.data[i] = (float) ((i * 7 + (size_t) step * 13) % 101) / 101.0f;
  return batch;
}

NOINLINE static Tensor
encoder_forward (const Model *model,
                 const Tensor *input)
{
  Tensor act = tensor_new (input->n);

  for (size_t i = 0; i < act.n; i++)
    act.data[i] = squash (input->data[i] * model->encoder_weights.data[i % HIDDEN]);
  return act;
}

NOINLINE static Tensor
decoder_forward (const Model  *model,
                 const Tensor *act)
{
  Tensor out = tensor_new (act->n);

  for (size_t i = 0; i < out.n; i++)
    out.data[i] = act->data[i] * model->decoder_weights.data[i % HIDDEN];
  return out;
}

/* Mean squared distance to a target of 0.25 per element. */
NOINLINE static double
compute_loss (const Tensor *out)
{
  double sum = 0;

  for (size_t i = 0; i < out->n; i++)
    sum += (out->data[i] - 0.25) * (out->data[i] - 0.25);
  return sum / out->n;
}

/* Gradients per hidden unit, summed over the batch; temporaries only. */
NOINLINE static void
backward (const Model  *model,
          const Tensor *act,
          const Tensor *out,
          Tensor       *grad_encoder,
          Tensor       *grad_decoder)
{
  Tensor grad_out = tensor_new (out->n);

  *grad_encoder = tensor_new (HIDDEN);
  *grad_decoder = tensor_new (HIDDEN);
  memset (grad_encoder->data, 0, HIDDEN * sizeof (float));
  memset (grad_decoder->data, 0, HIDDEN * sizeof (float));

  for (size_t i = 0; i < out->n; i++)
    {
      size_t h = i % HIDDEN;

      grad_out.data[i] = 2.0f * (out->data[i] - 0.25f) / BATCH;
      grad_decoder->data[h] += grad_out.data[i] * act->data[i];
      grad_encoder->data[h] += grad_out.data[i] * model->decoder_weights.data[h] * 0.1f;
    }
  tensor_free (&grad_out);
}

NOINLINE static void
optimizer_step (Model  *model,
                Tensor *grad_encoder,
                Tensor *grad_decoder)
{
  for (size_t h = 0; h < HIDDEN; h++)
    {
      model->encoder_weights.data[h] -= LEARNING_RATE * grad_encoder->data[h];
      model->decoder_weights.data[h] -= LEARNING_RATE * grad_decoder->data[h];
    }
  tensor_free (grad_encoder);
  tensor_free (grad_decoder);
}

/* The bug: a copy of the activations goes into a list nobody trims. */
NOINLINE static void
record_activation_history (const Tensor *act)
{
  Tensor copy = tensor_new (act->n);

  memcpy (copy.data, act->data, act->n * sizeof (float));
  activation_history = realloc (activation_history,
                                (history_len + 1) * sizeof (Tensor));
  activation_history[history_len++] = copy;
}

NOINLINE static double
train_step (Model *model,
            int    step)
{
  Tensor batch, act, out, grad_encoder, grad_decoder;
  double loss;

  batch = load_batch (step);

  tidemark_scope_push ("model.encoder");
  act = encoder_forward (model, &batch);
  tidemark_scope_pop ();

  tidemark_scope_push ("model.decoder");
  out = decoder_forward (model, &act);
  tidemark_scope_pop ();

  loss = compute_loss (&out);

  tidemark_scope_push ("backward");
  backward (model, &act, &out, &grad_encoder, &grad_decoder);
  tidemark_scope_pop ();

  tidemark_scope_push ("optimizer");
  optimizer_step (model, &grad_encoder, &grad_decoder);
  tidemark_scope_pop ();

  if (step >= HISTORY_FROM_STEP)
    {
      tidemark_scope_push ("metrics");
      record_activation_history (&act);
      tidemark_scope_pop ();
    }

  tensor_free (&out);
  tensor_free (&act);
  tensor_free (&batch);
  return loss;
}

int
main (void)
{
  Model model = { tensor_new (HIDDEN), tensor_new (HIDDEN) };

  for (size_t h = 0; h < HIDDEN; h++)
    {
      model.encoder_weights.data[h] = 1.0f + (float) (h % 5) / 10.0f;
      model.decoder_weights.data[h] = 0.1f;
    }

  for (int step = 1; step <= N_STEPS; step++)
    {
      double loss = train_step (&model, step);

      printf ("step %2d  loss %.6f\n", step, loss);
      tidemark_step (NULL);
    }

  printf ("leaky-trainer done\n");
  tensor_free (&model.encoder_weights);
  tensor_free (&model.decoder_weights);
  return 0;
}
