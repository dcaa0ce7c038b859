/* qconform plugin ABI: how any C-callable quantizer is put under test (see docs/plugin.md).
 * A plugin is a shared library exporting one symbol, qconform_plugin_v1. */
#ifndef QCONFORM_PLUGIN_H
#define QCONFORM_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define QCONFORM_PLUGIN_ABI_VERSION 1
typedef struct qconform_result {
  size_t size;          /* bytes (quantize) or floats (dequantize) written */
  char error_kind[64];  /* "" on success, else the kebab-case error kind of SPEC section 3 */
} qconform_result;
typedef struct qconform_plugin {
  uint32_t abi_version; /* QCONFORM_PLUGIN_ABI_VERSION */
  const char* name;
  /* Quantize count floats of a row-major tensor of shape[0..rank) into the serialized layout
     (SPEC 7). scheme is the canonical text form; global is NULL when absent.
     Returns 0 on success, 1 on a typed error (kind in result->error_kind), -1 if out is too small.
     Every pointer whose count is 0 may be NULL (shape when rank is 0, input, scales, and out when
     out_capacity is 0): a plugin must not pass it to memcpy or do arithmetic on it then. */
  int (*quantize)(const char* scheme, const size_t* shape, size_t rank, const float* input,
                  size_t count, const float* scales, size_t scale_count, const float* global,
                  uint8_t* out, size_t out_capacity, qconform_result* result);
  /* Dequantize a serialized tensor back to count floats. Same return convention; bytes may be
     NULL when size is 0, and out when out_capacity is 0. */
  int (*dequantize)(const char* scheme, const size_t* shape, size_t rank, const uint8_t* bytes,
                    size_t size, float* out, size_t out_capacity, qconform_result* result);
} qconform_plugin;
const qconform_plugin* qconform_plugin_v1(void);   /* the one exported symbol */

#ifdef __cplusplus
}
#endif

#endif /* QCONFORM_PLUGIN_H */
