# CLI acceptance cases, run as `cmake -DQCONFORM=<exe> -DCASE=<name> -P cases.cmake`.
#
# Each `if(CASE STREQUAL "name")` block is one ctest test (CMakeLists.txt reads the names from
# this file). Expected values come from SPEC.md or from burn's published test vectors, never
# from running qconform. Floats are checked on the raw stdout text: qconform prints the
# shortest decimal that reads back to the same f32, which is also how burn's tests spell them.
cmake_minimum_required(VERSION 3.25)

if(NOT QCONFORM OR NOT CASE)
  message(FATAL_ERROR "usage: cmake -DQCONFORM=<qconform> -DCASE=<name> -P cases.cmake")
endif()

# Runs qconform with `input` on stdin; sets RC, OUT, ERR. Arguments cannot be empty strings
# (a list drops them); a case that needs one calls execute_process itself.
function(qrun input)
  file(WRITE "${CASE}.stdin" "${input}")
  execute_process(COMMAND "${QCONFORM}" ${ARGN}
    INPUT_FILE "${CASE}.stdin" RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  set(RC "${rc}" PARENT_SCOPE)
  set(OUT "${out}" PARENT_SCOPE)
  set(ERR "${err}" PARENT_SCOPE)
  list(JOIN ARGN " " args)
  message(STATUS "qconform ${args}\n-- exit ${rc}\n-- stdout: ${out}-- stderr: ${err}")
endfunction()

function(fail what)
  message(FATAL_ERROR "${CASE}: ${what}\nexit: ${RC}\nstdout: ${OUT}\nstderr: ${ERR}")
endfunction()

function(expect_rc want)
  if(NOT RC STREQUAL want)
    fail("expected exit status ${want}")
  endif()
endfunction()

# stdout is exactly one JSON object and one newline.
function(expect_one_json_object)
  string(JSON type ERROR_VARIABLE jerr TYPE "${OUT}")
  if(jerr OR NOT type STREQUAL "OBJECT")
    fail("stdout is not one JSON object (${jerr})")
  endif()
  if(NOT OUT MATCHES "^{[^\n]*}\n$")
    fail("stdout is not exactly one line holding one JSON object")
  endif()
endfunction()

# The JSON value at the given path (keys and indices) has this text.
function(expect_json want)
  string(JSON got ERROR_VARIABLE jerr GET "${OUT}" ${ARGN})
  if(jerr OR NOT got STREQUAL want)
    fail("JSON ${ARGN}: expected '${want}', got '${got}' ${jerr}")
  endif()
endfunction()

function(expect_out regex)
  if(NOT OUT MATCHES "${regex}")
    fail("stdout does not match ${regex}")
  endif()
endfunction()

function(expect_err regex)
  if(NOT ERR MATCHES "${regex}")
    fail("stderr does not match ${regex}")
  endif()
endfunction()

function(expect_out_empty)
  if(NOT OUT STREQUAL "")
    fail("stdout should be empty")
  endif()
endfunction()

# A typed error: exit 1, the JSON error object, and the one-line message on stderr.
function(expect_typed_error kind)
  expect_rc(1)
  expect_one_json_object()
  expect_json("${kind}" error kind)
  string(JSON type TYPE "${OUT}" error message)
  if(NOT type STREQUAL "STRING")
    fail("error.message is not a string")
  endif()
  expect_err("^qconform: error: ${kind}: [^\n]+\n$")
endfunction()

# A usage error: exit 2, nothing on stdout, a message on stderr.
function(expect_usage_error regex)
  expect_rc(2)
  expect_out_empty()
  expect_err("^qconform: usage error: [^\n]*${regex}")
endfunction()

set(SEED_SCHEME "value=q8s,store=native,block=4:ue4m3,tensor=f32")
set(BURN_SCHEME "value=q8s,store=native")
# burn's should_support_quantize_symmetric_int8: [-1.8, -1.0, 0.0, 0.5] at 0.014173228 gives
# [-127, -71, 0, 35]. Bytes (SPEC §7): the codes as two's complement, then the scale as f32 LE.
set(BURN_INPUT "-1.8 -1.0 0.0 0.5\n")
set(BURN_BYTES "81b90023d436683c")
set(found FALSE)

# --- The seed (burn's panic "a two-level scheme should have a per-tensor scale") -------------

if(CASE STREQUAL "seed_missing_global_json")
  set(found TRUE)
  qrun("1 2 3 4 5 6 7 8" quantize --scheme ${SEED_SCHEME} --shape 8 --scales 0.5,0.125 --json)
  expect_typed_error(missing-global-scale)
endif()

if(CASE STREQUAL "seed_missing_global_text")
  set(found TRUE)
  qrun("1 2 3 4 5 6 7 8" quantize --scheme ${SEED_SCHEME} --shape 8 --scales 0.5,0.125)
  expect_rc(1)
  expect_out_empty()
  expect_err("^qconform: error: missing-global-scale: [^\n]+\n$")
endif()

# SPEC §3.2: whatever else is wrong (scale count, data length), the missing global comes first.
if(CASE STREQUAL "seed_precedence_over_count_and_shape")
  set(found TRUE)
  qrun("1 2 3" quantize --scheme ${SEED_SCHEME} --shape 8 --scales 0.5 --json)
  expect_typed_error(missing-global-scale)
endif()

if(CASE STREQUAL "seed_precedence_over_shape_overflow")
  set(found TRUE)
  qrun("1" quantize --scheme ${SEED_SCHEME} --shape 99999999999999999999999 --scales 0.5
    --json)
  expect_typed_error(missing-global-scale)
endif()

# --- burn's vectors -----------------------------------------------------------------------

if(CASE STREQUAL "burn_q8s_quantize")
  set(found TRUE)
  qrun("${BURN_INPUT}" quantize --scheme ${BURN_SCHEME} --shape 4 --scales 0.014173228 --json)
  expect_rc(0)
  expect_one_json_object()
  expect_out("^{\"codes\":\\[-127,-71,0,35\\],\"scales\":\\[0\\.014173228\\],\"global\":null,\"bytes\":\"${BURN_BYTES}\"}\n$")
  expect_json(-127 codes 0)
  expect_json(35 codes 3)
endif()

if(CASE STREQUAL "burn_q8s_quantize_text")
  set(found TRUE)
  qrun("${BURN_INPUT}" quantize --scheme ${BURN_SCHEME} --shape 4 --scales 0.014173228)
  expect_rc(0)
  expect_out("-1\\.8 +-127\n")
  expect_out("0\\.5 +35\n")
  expect_out("0\\.014173228")
  expect_out("${BURN_BYTES}")
endif()

# --impl with a plugin path (qconform/plugin.h): the example plugin gives burn's vector; the
# ties-to-even plugin rounds 0.5, 2.5 and -2.5 to even where SPEC §5 rounds half away from zero
# (1, 3, -3); the ABI has no calibrate, which is a usage error.
if(CASE STREQUAL "impl_plugin_quantize")
  set(found TRUE)
  qrun("${BURN_INPUT}" quantize --scheme ${BURN_SCHEME} --shape 4 --scales 0.014173228 --impl ${EXAMPLE_PLUGIN} --json)
  expect_rc(0)
  expect_out("^{\"codes\":\\[-127,-71,0,35\\],\"scales\":\\[0\\.014173228\\],\"global\":null,\"bytes\":\"${BURN_BYTES}\"}\n$")
endif()

if(CASE STREQUAL "impl_plugin_dequantize")
  set(found TRUE)
  qrun("" dequantize --scheme ${BURN_SCHEME} --shape 4 --bytes ${BURN_BYTES} --impl ${EXAMPLE_PLUGIN} --json)
  expect_rc(0)
  expect_out("^{\"values\":\\[-1\\.8,-1\\.0062993,0\\.0,0\\.496063\\]}\n$")
endif()

if(CASE STREQUAL "impl_plugin_with_a_bug")
  set(found TRUE)
  qrun("0.5 1.5 2.5 -2.5" quantize --scheme ${BURN_SCHEME} --shape 4 --scales 1 --impl ${TIES_TO_EVEN_PLUGIN} --json)
  expect_rc(0)
  expect_json(0 codes 0)
  expect_json(2 codes 2)
  qrun("0.5 1.5 2.5 -2.5" quantize --scheme ${BURN_SCHEME} --shape 4 --scales 1 --json)
  expect_json(1 codes 0)
  expect_json(3 codes 2)
  expect_json(-3 codes 3)
endif()

if(CASE STREQUAL "impl_plugin_calibrate_is_a_usage_error")
  set(found TRUE)
  qrun("${BURN_INPUT}" calibrate --scheme ${BURN_SCHEME} --shape 4 --impl ${EXAMPLE_PLUGIN} --json)
  expect_usage_error("no calibrate")
endif()

# burn dequantizes the same codes back to [-1.8, -1.0062993, 0.0, 0.496063].
if(CASE STREQUAL "burn_q8s_dequantize")
  set(found TRUE)
  qrun("" dequantize --scheme ${BURN_SCHEME} --shape 4 --bytes ${BURN_BYTES} --json)
  expect_rc(0)
  expect_one_json_object()
  expect_out("^{\"values\":\\[-1\\.8,-1\\.0062993,0\\.0,0\\.496063\\]}\n$")
endif()

if(CASE STREQUAL "burn_q8s_dequantize_uppercase_hex")
  set(found TRUE)
  string(TOUPPER "${BURN_BYTES}" upper)
  qrun("" dequantize --scheme ${BURN_SCHEME} --shape 4 --bytes ${upper} --json)
  expect_rc(0)
  expect_out("^{\"values\":\\[-1\\.8,-1\\.0062993,0\\.0,0\\.496063\\]}\n$")
endif()

# burn's min_max_calibration_range_per_tensor: range [-1.8, 0.5]; SPEC §8 gives
# fl(fl(2 * 1.8) / 254), the scale of burn's quantize vector.
if(CASE STREQUAL "burn_calibrate_minmax")
  set(found TRUE)
  qrun("${BURN_INPUT}" calibrate --scheme ${BURN_SCHEME} --shape 4 --json)
  expect_rc(0)
  expect_one_json_object()
  expect_out("^{\"scales\":\\[0\\.014173228\\],\"global\":null}\n$")
endif()

# burn's should_support_quantize_dynamic_int8: [5, 0, 4, -12.7] gives [50, 0, 40, -127] at
# scale 0.1. Without --scales, quantize calibrates first.
if(CASE STREQUAL "burn_quantize_dynamic")
  set(found TRUE)
  qrun("5 0 4 -12.7" quantize --scheme ${BURN_SCHEME} --shape 4 --json)
  expect_rc(0)
  expect_one_json_object()
  expect_out("^{\"codes\":\\[50,0,40,-127\\],\"scales\":\\[0\\.1\\],\"global\":null,")
endif()

# --- Two-level layout, SPEC §7: 8 code bytes + 2 ue4m3 scales + 4 bytes of f32 global --------
# eff = 2 * 0.5 = 1 and 2 * 0.125 = 0.25; ue4m3 0.5 = 0x30, 0.125 = 0x20; 2.0f = 0x40000000.

if(CASE STREQUAL "two_level_quantize")
  set(found TRUE)
  qrun("1 2 3 4 1 2 3 4" quantize --scheme ${SEED_SCHEME} --shape 8 --scales 0.5,0.125
    --global 2 --json)
  expect_rc(0)
  expect_one_json_object()
  expect_out("^{\"codes\":\\[1,2,3,4,4,8,12,16\\],\"scales\":\\[0\\.5,0\\.125\\],\"global\":2\\.0,\"bytes\":\"0102030404080c10302000000040\"}\n$")
endif()

if(CASE STREQUAL "two_level_dequantize")
  set(found TRUE)
  qrun("" dequantize --scheme ${SEED_SCHEME} --shape 8 --bytes 0102030404080c10302000000040
    --json)
  expect_rc(0)
  expect_out("^{\"values\":\\[1\\.0,2\\.0,3\\.0,4\\.0,1\\.0,2\\.0,3\\.0,4\\.0\\]}\n$")
endif()

if(CASE STREQUAL "dequantize_truncated")
  set(found TRUE)
  qrun("" dequantize --scheme ${BURN_SCHEME} --shape 4 --bytes 81b9 --json)
  expect_typed_error(truncated-buffer)
endif()

if(CASE STREQUAL "dequantize_trailing")
  set(found TRUE)
  qrun("" dequantize --scheme ${BURN_SCHEME} --shape 4 --bytes ${BURN_BYTES}00 --json)
  expect_typed_error(trailing-bytes)
endif()

# --- Signed zero, infinities, lookup tables (SPEC §5) --------------------------------------

# e4m3 keeps -0: code 0x80; the scale 1.0f is 0x3f800000.
if(CASE STREQUAL "negative_zero_quantize")
  set(found TRUE)
  qrun("-0" quantize --scheme value=e4m3,store=native --shape 1 --scales 1 --json)
  expect_rc(0)
  expect_out("^{\"codes\":\\[128\\],\"scales\":\\[1\\.0\\],\"global\":null,\"bytes\":\"800000803f\"}\n$")
endif()

if(CASE STREQUAL "negative_zero_dequantize")
  set(found TRUE)
  qrun("" dequantize --scheme value=e4m3,store=native --shape 1 --bytes 800000803f --json)
  expect_rc(0)
  expect_out("^{\"values\":\\[-0\\.0\\]}\n$")
endif()

# q2f lookup, table [-inf, 0, 1, inf]: +inf picks the largest entry, -inf the smallest, and a
# finite value the nearest finite one. packed_u32: 2-bit fields 3,0,2,1 from the low bits
# = 0x63, then the scale.
if(CASE STREQUAL "lookup_quantize_infinities")
  set(found TRUE)
  qrun("inf -inf 5 0.4" quantize --scheme value=q2f,store=packed_u32:0,mode=lookup --shape 4
    --scales 1 --table -inf,0,1,inf --json)
  expect_rc(0)
  expect_out("^{\"codes\":\\[3,0,2,1\\],\"scales\":\\[1\\.0\\],\"global\":null,\"bytes\":\"630000000000803f\"}\n$")
endif()

if(CASE STREQUAL "lookup_dequantize_infinities")
  set(found TRUE)
  qrun("" dequantize --scheme value=q2f,store=packed_u32:0,mode=lookup --shape 4
    --bytes 630000000000803f --table -inf,0,1,inf --json)
  expect_rc(0)
  expect_out("^{\"values\":\\[\"inf\",\"-inf\",1\\.0,0\\.0\\]}\n$")
endif()

if(CASE STREQUAL "lookup_missing_table")
  set(found TRUE)
  qrun("1" quantize --scheme value=q2f,store=packed_u32:0,mode=lookup --shape 1 --scales 1
    --json)
  expect_typed_error(missing-lookup-table)
endif()

# 0x15ae43fd: the shortest f32 decimal, 7.038531e-26, read as a double and rounded to f32 gives
# 0x15ae43fe; 7.0385307e-26 reads back exactly both ways (1 * scale is the scale).
if(CASE STREQUAL "float_double_rounding_trap")
  set(found TRUE)
  qrun("" dequantize --scheme ${BURN_SCHEME} --shape 1 --bytes 01fd43ae15 --json)
  expect_rc(0)
  expect_out("^{\"values\":\\[7\\.0385307e-26\\]}\n$")
endif()

# --- Literal syntax ---------------------------------------------------------------------------

# 0x1p-1 is 0.5, 0x1.8p1 is 3: hex floats read like strtof; -0 and +inf are literals too.
if(CASE STREQUAL "hex_float_literals")
  set(found TRUE)
  qrun("0x1.8p1 -0x1p-1\n+inf\t-0" quantize --scheme ${BURN_SCHEME} --shape 4 --scales 0x1p-1
    --json)
  expect_rc(0)
  expect_out("^{\"codes\":\\[6,-1,127,0\\],\"scales\":\\[0\\.5\\],")
endif()

if(CASE STREQUAL "nan_input")
  set(found TRUE)
  qrun("1 nan 2" quantize --scheme ${BURN_SCHEME} --shape 3 --scales 1 --json)
  expect_typed_error(nan-input)
endif()

# Rank 0 ("scalar" or the empty string): one element, one native byte, then the scale.
if(CASE STREQUAL "scalar_shape_word")
  set(found TRUE)
  qrun("3" quantize --scheme ${BURN_SCHEME} --shape scalar --scales 1 --json)
  expect_rc(0)
  expect_out("^{\"codes\":\\[3\\],\"scales\":\\[1\\.0\\],\"global\":null,\"bytes\":\"030000803f\"}\n$")
endif()

if(CASE STREQUAL "scalar_shape_empty")
  set(found TRUE)
  file(WRITE "${CASE}.stdin" "3")
  execute_process(COMMAND "${QCONFORM}" quantize --scheme ${BURN_SCHEME} --shape "" --scales 1
    --json INPUT_FILE "${CASE}.stdin" RESULT_VARIABLE RC OUTPUT_VARIABLE OUT ERROR_VARIABLE ERR)
  expect_rc(0)
  expect_out("^{\"codes\":\\[3\\],\"scales\":\\[1\\.0\\],\"global\":null,\"bytes\":\"030000803f\"}\n$")
endif()

# `--scales ""` is zero scales; per-tensor needs exactly one (SPEC §3.4).
if(CASE STREQUAL "empty_scales")
  set(found TRUE)
  file(WRITE "${CASE}.stdin" "1 2")
  execute_process(COMMAND "${QCONFORM}" quantize --scheme ${BURN_SCHEME} --shape 2 --scales ""
    --json INPUT_FILE "${CASE}.stdin" RESULT_VARIABLE RC OUTPUT_VARIABLE OUT ERROR_VARIABLE ERR)
  expect_typed_error(scale-count-mismatch)
endif()

if(CASE STREQUAL "shape_overflow_dim")
  set(found TRUE)
  qrun("1" quantize --scheme ${BURN_SCHEME} --shape 99999999999999999999999 --scales 1 --json)
  expect_typed_error(shape-overflow)
endif()

if(CASE STREQUAL "shape_overflow_rank")
  set(found TRUE)
  qrun("1" quantize --scheme ${BURN_SCHEME} --shape 1x1x1x1x1x1x1x1x1 --scales 1 --json)
  expect_typed_error(shape-overflow)
endif()

if(CASE STREQUAL "shape_mismatch")
  set(found TRUE)
  qrun("1 2 3" quantize --scheme ${BURN_SCHEME} --shape 2x2 --scales 1 --json)
  expect_typed_error(shape-mismatch)
endif()

# --- Typed errors from the scheme ------------------------------------------------------------

if(CASE STREQUAL "invalid_scheme_quantize")
  set(found TRUE)
  qrun("1" quantize --scheme value=q9x --shape 1 --scales 1 --json)
  expect_typed_error(invalid-scheme)
endif()

if(CASE STREQUAL "invalid_scheme_dequantize")
  set(found TRUE)
  qrun("" dequantize --scheme value=q8s,value=q8s --shape 1 --bytes 00 --json)
  expect_typed_error(invalid-scheme)
endif()

if(CASE STREQUAL "invalid_scheme_calibrate")
  set(found TRUE)
  qrun("1" calibrate --scheme block=256:f16 --shape 1 --json)
  expect_typed_error(invalid-scheme)
endif()

if(CASE STREQUAL "scheme_command_invalid")
  set(found TRUE)
  qrun("" scheme store=native:0 --json)
  expect_typed_error(invalid-scheme)
endif()

# --- Usage errors: exit 2 ---------------------------------------------------------------------

if(CASE STREQUAL "usage_unknown_impl")
  set(found TRUE)
  qrun("1" quantize --scheme ${BURN_SCHEME} --shape 1 --scales 1 --impl fancy --json)
  expect_usage_error("reference")
endif()

if(CASE STREQUAL "usage_odd_hex")
  set(found TRUE)
  qrun("" dequantize --scheme ${BURN_SCHEME} --shape 1 --bytes abc --json)
  expect_usage_error("hex")
endif()

if(CASE STREQUAL "usage_bench_offset_off_grid")
  set(found TRUE)
  # Buffers go 0 to 60 bytes past a 64-byte boundary, in steps of a float; the check comes before
  # any benchmark runs (the filter matches nothing, which would be exit 1).
  qrun("" bench --offset 18 --filter no-such-case)
  expect_usage_error("multiple of 4 from 0 to 60: 18")
endif()

if(CASE STREQUAL "usage_bench_far_prefetch")
  set(found TRUE)
  qrun("" bench --far-prefetch sometimes --filter no-such-case)
  expect_usage_error("sometimes")
endif()

# `qconform bench OPTION VALUE` for each value after `err` (one small row each): exit 0, the row on
# stdout, and stderr matching `err` with @VALUE@ replaced by the value (the run says how the
# switch went).
function(expect_bench_switch option err)
  foreach(value IN LISTS ARGN)
    qrun("" bench ${option} ${value} --filter "^calq-q8s-b32-f16/16KiB/ceiling" --min-time 0.001)
    expect_rc(0)
    string(REPLACE "@VALUE@" "${value}" want "${err}")
    expect_err("${want}")
    expect_out("calq-q8s-b32-f16 +16KiB +ceiling")
  endforeach()
endfunction()

if(CASE STREQUAL "bench_far_prefetch")
  set(found TRUE)
  expect_bench_switch(--far-prefetch "far prefetches @VALUE@;" on off)
endif()

if(CASE STREQUAL "usage_bench_chunk_prefetch")
  set(found TRUE)
  qrun("" bench --chunk-prefetch l3 --filter no-such-case)
  expect_usage_error("not auto, l1 or l2: l3")
endif()

if(CASE STREQUAL "bench_chunk_prefetch")
  set(found TRUE)
  # Each supported target's level is named, and every one is as asked.
  expect_bench_switch(--chunk-prefetch "next-chunk prefetch level: ([a-z0-9_]+ @VALUE@(, )?)+\n" l1 l2)
endif()

if(CASE STREQUAL "usage_bad_hex_digit")
  set(found TRUE)
  qrun("" dequantize --scheme ${BURN_SCHEME} --shape 1 --bytes 0g --json)
  expect_usage_error("hex")
endif()

if(CASE STREQUAL "usage_bad_stdin_literal")
  set(found TRUE)
  qrun("1 1.5x 2" quantize --scheme ${BURN_SCHEME} --shape 3 --scales 1 --json)
  expect_usage_error("1\\.5x")
endif()

if(CASE STREQUAL "usage_bad_scale_literal")
  set(found TRUE)
  qrun("1" quantize --scheme ${BURN_SCHEME} --shape 1 --scales 0.5,abc --json)
  expect_usage_error("abc")
endif()

if(CASE STREQUAL "usage_empty_scale_item")
  set(found TRUE)
  qrun("1" quantize --scheme ${BURN_SCHEME} --shape 1 --scales 0.5,,1 --json)
  expect_usage_error("--scales")
endif()

if(CASE STREQUAL "usage_shape_garbage")
  set(found TRUE)
  qrun("1" quantize --scheme ${BURN_SCHEME} --shape 2xa --scales 1 --json)
  expect_usage_error("--shape")
endif()

if(CASE STREQUAL "usage_missing_scheme")
  set(found TRUE)
  qrun("1" quantize --shape 1 --scales 1 --json)
  expect_usage_error("--scheme")
endif()

if(CASE STREQUAL "usage_no_subcommand")
  set(found TRUE)
  qrun("")
  expect_usage_error("")
endif()

if(CASE STREQUAL "usage_global_without_scales")
  set(found TRUE)
  qrun("1" quantize --scheme ${SEED_SCHEME} --shape 1 --global 1 --json)
  expect_usage_error("--global")
endif()

# --global without --scales on a one-level scheme: SPEC §3.2's unexpected-global-scale, not a
# usage error; unparsable scheme text stays invalid-scheme (SPEC §3: before everything).
if(CASE STREQUAL "global_without_scales_one_level")
  set(found TRUE)
  qrun("1" quantize --scheme value=q8s --shape 1 --global 1 --json)
  expect_typed_error(unexpected-global-scale)
endif()

if(CASE STREQUAL "global_without_scales_invalid_scheme")
  set(found TRUE)
  qrun("1" quantize --scheme bogus --shape 1 --global 1 --json)
  expect_typed_error(invalid-scheme)
endif()

if(CASE STREQUAL "usage_bad_method")
  set(found TRUE)
  qrun("1" calibrate --scheme ${BURN_SCHEME} --shape 1 --method median --json)
  expect_usage_error("")
endif()

# --- Informational subcommands ---------------------------------------------------------------

if(CASE STREQUAL "scheme_nvfp4")
  set(found TRUE)
  qrun("" scheme nvfp4)
  expect_rc(0)
  expect_out("^value=e2m1,store=packed_native:0,mode=symmetric,block=16:ue4m3,tensor=f32\n$")
endif()

# SPEC §1: leading 1s dropped, items in canonical order, defaults printed.
if(CASE STREQUAL "scheme_canonical")
  set(found TRUE)
  qrun("" scheme block=1x32:f16,value=q4s --json)
  expect_rc(0)
  expect_json("value=q4s,store=packed_u32:0,mode=symmetric,block=32:f16" scheme)
endif()

if(CASE STREQUAL "scheme_all_ones_block")
  set(found TRUE)
  qrun("" scheme value=q8s,store=native,block=1x1:f32)
  expect_rc(0)
  expect_out("^value=q8s,store=native,mode=symmetric,block=1:f32\n$")
endif()

if(CASE STREQUAL "errors_in_precedence_order")
  set(found TRUE)
  qrun("" errors)
  expect_rc(0)
  expect_out("^invalid-scheme\n")
  expect_out("missing-global-scale\nunexpected-global-scale\nshape-overflow\n")
  expect_out("\nnan-input\n")
endif()

if(CASE STREQUAL "targets")
  set(found TRUE)
  qrun("" targets)
  expect_rc(0)
  expect_out("^reference\noptimized\n")
  # The selectable names, then two comment lines: every optimized target compiled in, and those
  # this CPU supports (best first), which are exactly the selectable optimized:<target> names.
  expect_out("\n# compiled in:( optimized:[a-z0-9_]+)+\n# supported by this CPU:( optimized:[a-z0-9_]+)+\n$")
  string(REGEX MATCHALL "(^|\n)optimized:[a-z0-9_]+" selectable "${OUT}")
  string(REPLACE "\n" "" selectable "${selectable}")
  string(REGEX MATCH "# compiled in:[^\n]*" compiled "${OUT}")
  string(REGEX MATCH "# supported by this CPU:[^\n]*" supported "${OUT}")
  string(REGEX MATCHALL "optimized:[a-z0-9_]+" compiled "${compiled}")
  string(REGEX MATCHALL "optimized:[a-z0-9_]+" supported "${supported}")
  if(NOT supported STREQUAL selectable)
    fail("supported targets '${supported}' are not the selectable ones '${selectable}'")
  endif()
  foreach(t IN LISTS supported)
    if(NOT t IN_LIST compiled)
      fail("${t} is supported but not listed as compiled in")
    endif()
  endforeach()
  # A target compiled in that this CPU lacks is refused as a usage error, never run.
  foreach(t IN LISTS compiled)
    if(NOT t IN_LIST supported)
      qrun("1\n" quantize --scheme value=q8s --shape 1 --impl ${t})
      expect_rc(2)
    endif()
  endforeach()
endif()

if(CASE STREQUAL "targets_json")
  set(found TRUE)
  qrun("" targets)
  string(REGEX MATCH "# compiled in:[^\n]*" text_compiled "${OUT}")
  string(REGEX MATCHALL "optimized:[a-z0-9_]+" text_compiled "${text_compiled}")
  qrun("" targets --json)
  expect_rc(0)
  expect_one_json_object()
  expect_json("reference" targets 0)
  expect_json("optimized" targets 1)
  string(JSON n LENGTH "${OUT}" compiled)
  if(n EQUAL 0)
    fail("no optimized target compiled in")
  endif()
  set(json_compiled "")
  math(EXPR last "${n} - 1")
  foreach(i RANGE ${last})
    string(JSON t GET "${OUT}" compiled ${i})
    list(APPEND json_compiled "${t}")
  endforeach()
  if(NOT json_compiled STREQUAL text_compiled)
    fail("JSON compiled '${json_compiled}' differs from the text's '${text_compiled}'")
  endif()
  string(JSON best GET "${OUT}" supported 0)
  expect_json("${best}" targets 2)
endif()

if(CASE STREQUAL "version")
  set(found TRUE)
  qrun("" --version)
  expect_rc(0)
  expect_out("^qconform [0-9]+\\.[0-9]+\\.[0-9]+")
endif()

if(NOT found)
  message(FATAL_ERROR "unknown case '${CASE}'")
endif()
