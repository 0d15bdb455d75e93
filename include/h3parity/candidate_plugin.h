/* h3parity candidate plugin ABI: a kernel team's implementation of MiniMax-H3 operator groups,
 * loaded by h3parity at run time (impl spec `plugin:PATH`) without rebuilding h3parity.
 *
 * C only: no C++ and no ATen types cross this boundary. Tensors are DLPack `DLTensor`s
 * (<dlpack/dlpack.h>, DLPack 0.6 or newer). docs/plugins.md is the guide; this header is the
 * contract.
 *
 * Versioning (the PJRT C API / ONNX Runtime custom-op scheme):
 *  - The plugin exports one entry point, `h3p_candidate_plugin`, which returns a pointer to a
 *    static `H3pPlugin` table.
 *  - `abi_version` carries a major and a minor number. h3parity refuses another major version;
 *    a minor version only ever appends fields to the end of a struct.
 *  - Every struct starts with `struct_size` (the sizeof the other side was compiled with). Fields
 *    beyond the reader's view of struct_size are treated as absent (NULL), so an older plugin
 *    keeps loading into a newer h3parity, and a newer plugin into an older one of the same
 *    major version.
 *
 * Calling convention:
 *  - h3parity allocates every output (compact row-major, the shape and dtype the provider's op
 *    produces) and passes it as `out`; a function writes every element of `out` and nothing
 *    else. Inputs are compact row-major too and must not be written. h3parity passes
 *    `strides` NULL and `byte_offset` 0, never a NULL `data`, and never calls a function whose
 *    output has no elements; shapes and dtypes are checked against this contract before a
 *    call (an input of another shape never reaches the plugin).
 *  - The device and stream are explicit in `H3pCall`: tensors live on `call->device`; on CUDA
 *    the work must be ordered on `call->stream` (a cudaStream_t) and may return before it
 *    completes, as a kernel launch does.
 *  - A function returns H3P_OK, or an error code with a NUL-terminated message in
 *    `call->error` (at most `call->error_size` bytes, the NUL included). It never throws,
 *    longjmps or exits. H3P_ERROR_UNSUPPORTED says "this device or dtype is not handled",
 *    H3P_ERROR anything else.
 *  - h3parity calls one function at a time per context unless the plugin sets
 *    H3P_PLUGIN_THREAD_SAFE in `flags`.
 *
 * Operator groups (ARCHITECTURE.md): each group of the transformer graph is provided by the
 * plugin when its `H3pOps` pointer is non-NULL; a NULL pointer means "this group is not
 * provided" (the impl spec must then say where it comes from, e.g. `plugin:PATH:rest=provider`).
 * A provided group must fill every primitive that group calls (the table in docs/plugins.md;
 * `h3parity plugin-contract` prints it); the others may be NULL. One `H3pOps` table may serve
 * several groups.
 */
#ifndef H3PARITY_CANDIDATE_PLUGIN_H_
#define H3PARITY_CANDIDATE_PLUGIN_H_

#include <dlpack/dlpack.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define H3P_PLUGIN_ABI_MAJOR 1
#define H3P_PLUGIN_ABI_MINOR 0
/* abi_version = major << 16 | minor. */
#define H3P_PLUGIN_ABI_VERSION ((uint32_t)((H3P_PLUGIN_ABI_MAJOR << 16) | H3P_PLUGIN_ABI_MINOR))
#define H3P_PLUGIN_ABI_VERSION_MAJOR(v) ((uint32_t)(v) >> 16)
#define H3P_PLUGIN_ABI_VERSION_MINOR(v) ((uint32_t)(v) & 0xffffu)

/* The entry point's name, for dlsym. */
#define H3P_PLUGIN_ENTRY_NAME "h3p_candidate_plugin"

#if defined(_WIN32)
#define H3P_PLUGIN_EXPORT __declspec(dllexport)
#else
#define H3P_PLUGIN_EXPORT __attribute__((visibility("default")))
#endif

/* Status codes. */
#define H3P_OK 0
#define H3P_ERROR 1            /* any failure; the message says what */
#define H3P_ERROR_UNSUPPORTED 2 /* a dtype, shape or device this plugin does not handle */

/* The operator groups, as impl specs name them (the call site that invoked a primitive). */
typedef enum H3pGroup {
  H3P_GROUP_GEMM = 0,      /* "gemm": the six block GEMMs */
  H3P_GROUP_ATTENTION = 1, /* "attention": SDPA over the packed sequence in the blocks */
  H3P_GROUP_SWIGLU = 2,    /* "swiglu": value * silu(gate) in the blocks */
  H3P_GROUP_ADALN = 3,     /* "adaln": Linear(silu(temb)) and its per-row gather */
  H3P_GROUP_QK_NORM = 4,   /* "qk_norm": per-head RMSNorm of q and k in the blocks */
  H3P_GROUP_ROPE = 5,      /* "rope": partial rotary embedding of q and k */
  H3P_GROUP_NORM = 6,      /* "norm": norm1 / norm2 RMSNorm with (1+scale)*x+shift */
  H3P_GROUP_RESIDUAL = 7,  /* "residual": the gated residual adds x + gate*y */
  H3P_GROUP_EMBED = 8,     /* "embed": input projections, token refiner, timestep embedding */
  H3P_GROUP_HEAD = 9       /* "head": norm_out and the two output projections */
} H3pGroup;

/* Context of one primitive call. Owned by h3parity; valid for the duration of the call. */
typedef struct H3pCall {
  size_t struct_size;
  void* context;     /* the plugin's context from H3pPlugin.create */
  int32_t group;     /* H3pGroup of the call site */
  DLDevice device;   /* where every tensor of the call lives (kDLCPU or kDLCUDA) */
  void* stream;      /* kDLCUDA: the cudaStream_t LibTorch runs on (NULL: the legacy default
                        stream); NULL on the CPU */
  char* error;       /* on failure: a NUL-terminated message, at most error_size bytes */
  size_t error_size;
} H3pCall;

/* The primitives, with the provider's contract (docs/plugins.md has the dtype and rounding
 * table). S rows, C channels, H heads, D head dim, R rotary width, F the SwiGLU width.
 * Floating tensors of one call share a dtype (bf16 or f32) unless noted. */

/* out (M, N) = x (M, K) · wᵀ (w (N, K)) + b (N, or NULL): nn.Linear, fp32 accumulation,
 * rounded once to the dtype. x is always 2-D: h3parity folds leading dimensions into M. */
typedef int32_t (*H3pLinearFn)(const H3pCall* call, const DLTensor* x, const DLTensor* w,
                               const DLTensor* b, DLTensor* out);
/* out (S, H, D) = softmax(q·kᵀ / sqrt(D)) · v over q, k, v (S, H, D); no mask. */
typedef int32_t (*H3pAttentionFn)(const H3pCall* call, const DLTensor* q, const DLTensor* k,
                                  const DLTensor* v, DLTensor* out);
/* out (S, F) = h[:, :F] * silu(h[:, F:]) for h (S, 2F). */
typedef int32_t (*H3pSwigluFn)(const H3pCall* call, const DLTensor* h, DLTensor* out);
/* out = silu(x), any shape. */
typedef int32_t (*H3pSiluFn)(const H3pCall* call, const DLTensor* x, DLTensor* out);
/* out = RMSNorm(x) * weight over the last dim; x (S, C) with weight (C), or (S, H, D) with
 * weight (D) for the per-head q/k norm; fp32 statistics. */
typedef int32_t (*H3pRmsNormFn)(const H3pCall* call, const DLTensor* x, const DLTensor* weight,
                                double eps, DLTensor* out);
/* out (S, C) = rms_norm(x, weight, eps) * (1 + scale) + shift; scale, shift (S, C). */
typedef int32_t (*H3pNormModulateFn)(const H3pCall* call, const DLTensor* x,
                                     const DLTensor* weight, double eps, const DLTensor* scale,
                                     const DLTensor* shift, DLTensor* out);
/* out (N, C) = table[rows] for table (T, C) and rows (N) int64 in [0, T). */
typedef int32_t (*H3pGatherRowsFn)(const H3pCall* call, const DLTensor* table,
                                   const DLTensor* rows, DLTensor* out);
/* Rotate-half RoPE of the first R channels of each head of x (S, H, D); cos, sin (S, R) f32,
 * cast to x's dtype first; channels R..D pass through. */
typedef int32_t (*H3pRopeFn)(const H3pCall* call, const DLTensor* x, const DLTensor* cos,
                             const DLTensor* sin, DLTensor* out);
/* out = x + gate * y, all (S, C). */
typedef int32_t (*H3pGatedResidualFn)(const H3pCall* call, const DLTensor* x,
                                      const DLTensor* gate, const DLTensor* y, DLTensor* out);
/* out = x + y, same shape. */
typedef int32_t (*H3pAddFn)(const H3pCall* call, const DLTensor* x, const DLTensor* y,
                            DLTensor* out);
/* out (N, dim) f32: sinusoidal embedding of t (N) f32, cos half first, max period 10000;
 * dim is out's width. */
typedef int32_t (*H3pTimestepSinusoidFn)(const H3pCall* call, const DLTensor* t,
                                         DLTensor* out);

/* The primitives one operator group calls (NULL where the group calls none of that kind). */
typedef struct H3pOps {
  size_t struct_size;
  H3pLinearFn linear;
  H3pAttentionFn attention;
  H3pSwigluFn swiglu;
  H3pSiluFn silu;
  H3pRmsNormFn rms_norm;
  H3pNormModulateFn norm_modulate;
  H3pGatherRowsFn gather_rows;
  H3pRopeFn rope;
  H3pGatedResidualFn gated_residual;
  H3pAddFn add;
  H3pTimestepSinusoidFn timestep_sinusoid;
} H3pOps;

/* What h3parity tells the plugin when it creates the context. */
typedef struct H3pCreateInfo {
  size_t struct_size;
  uint32_t host_abi_version; /* H3P_PLUGIN_ABI_VERSION of h3parity */
  const char* host_version;  /* h3parity's version, e.g. "0.1.0" */
  const char* argument;      /* the plugin's argument (python:FILE gives FILE), or "" */
  const char* torch_version; /* LibTorch version h3parity runs with, e.g. "2.11.0" */
} H3pCreateInfo;

/* Flags. */
#define H3P_PLUGIN_THREAD_SAFE 1u /* primitives may be called from several threads at once */

/* The plugin's table, returned by the entry point; static storage (it may be non-const when
 * create fills it in), valid for the life of the process, never freed. h3parity
 * reads struct_size and abi_version first, calls create, and only then reads the other fields,
 * so create may fill in name, version, flags and the group tables (a loader such as the Python
 * bridge does). */
typedef struct H3pPlugin {
  size_t struct_size;       /* sizeof(H3pPlugin) as the plugin was compiled */
  uint32_t abi_version;     /* H3P_PLUGIN_ABI_VERSION the plugin was compiled with */
  uint32_t flags;           /* H3P_PLUGIN_* flags */
  const char* name;         /* recorded in every run's manifest, e.g. "acme-kernels" */
  const char* version;      /* likewise, e.g. "0.3.1" */

  /* Creates the plugin's context, once per process, before any primitive runs. Returns H3P_OK
   * and sets *context (may be NULL), or an error with a message in error (error_size bytes).
   * May be NULL when the plugin needs no context. */
  int32_t (*create)(const H3pCreateInfo* info, void** context, char* error, size_t error_size);
  /* Destroys the context at process exit (after every primitive has returned). May be NULL. */
  void (*destroy)(void* context);
  /* Optional: files besides the library whose bytes decide the numerics (a Python plugin's
   * modules, a cubin), newline-separated absolute paths, valid until destroy. h3parity hashes
   * them into the run's identity. NULL or "" when there are none. */
  const char* (*source_files)(void* context);

  /* One table per operator group; NULL = the group is not provided. */
  const H3pOps* gemm;
  const H3pOps* attention;
  const H3pOps* swiglu;
  const H3pOps* adaln;
  const H3pOps* qk_norm;
  const H3pOps* rope;
  const H3pOps* norm;
  const H3pOps* residual;
  const H3pOps* embed;
  const H3pOps* head;
} H3pPlugin;

/* The entry point a plugin exports. `host_abi_version` is h3parity's H3P_PLUGIN_ABI_VERSION;
 * a plugin may return NULL to refuse a host it cannot serve. */
typedef const H3pPlugin* (*H3pPluginEntryFn)(uint32_t host_abi_version);

#ifdef __cplusplus
}
#endif

#endif /* H3PARITY_CANDIDATE_PLUGIN_H_ */
