#!/usr/bin/env bash
# The OSS-Fuzz / ClusterFuzzLite build of qconform's fuzz targets (oss-fuzz/build.sh and
# .clusterfuzzlite/build.sh only call this). Honours OSS-Fuzz's build contract:
#   $CC $CXX $CFLAGS $CXXFLAGS   compilers and flags (sanitizers, -fsanitize=fuzzer-no-link, -stdlib)
#   $LIB_FUZZING_ENGINE          what each target links to get main()
#   $SRC $WORK $OUT              sources, scratch space, and where the targets go
# and puts in $OUT, for every target registered in fuzz/CMakeLists.txt: the binary,
# <target>_seed_corpus.zip (corpus/<target>/), <target>.dict and <target>.options.
#
# Highway: when $SRC/highway exists (the Dockerfiles clone it) it is built here as a static library
# with the same compilers and flags, so it is instrumented and nothing shared needs to ship in
# $OUT; otherwise the system's Highway is used (the local simulation, scripts/fuzz ossfuzz-check).
set -euo pipefail

: "${CC:?}" "${CXX:?}" "${OUT:?}" "${WORK:?}" "${LIB_FUZZING_ENGINE:?}"
CFLAGS="${CFLAGS:-}"
CXXFLAGS="${CXXFLAGS:-}"
SRC="${SRC:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$WORK/qconform-fuzz"
generator=()
if command -v ninja >/dev/null; then generator=(-G Ninja); fi
jobs="$(nproc 2>/dev/null || echo 2)"

prefix_path=()
if [[ -d "$SRC/highway" ]]; then
  hwy_build="$WORK/highway-build"
  hwy_prefix="$WORK/highway-install"
  cmake -S "$SRC/highway" -B "$hwy_build" "${generator[@]}" \
    -DCMAKE_C_COMPILER="$CC" -DCMAKE_CXX_COMPILER="$CXX" \
    -DCMAKE_C_FLAGS="$CFLAGS" -DCMAKE_CXX_FLAGS="$CXXFLAGS" \
    -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=OFF -DCMAKE_POSITION_INDEPENDENT_CODE=ON \
    -DHWY_ENABLE_TESTS=OFF -DHWY_ENABLE_EXAMPLES=OFF -DHWY_ENABLE_CONTRIB=OFF -DHWY_ENABLE_INSTALL=ON \
    -DHWY_FORCE_STATIC_LIBS=ON -DCMAKE_INSTALL_PREFIX="$hwy_prefix"
  cmake --build "$hwy_build" --parallel "$jobs"
  cmake --install "$hwy_build"
  prefix_path=(-DCMAKE_PREFIX_PATH="$hwy_prefix")
fi

# Warnings stay warnings here: OSS-Fuzz's compiler is newer than the project's and must not
# break the fuzzing build over a new diagnostic.
cmake -S "$root" -B "$build" "${generator[@]}" \
  -DCMAKE_CXX_COMPILER="$CXX" -DCMAKE_CXX_FLAGS="$CXXFLAGS" \
  -DQCONFORM_FUZZ_ENGINE=oss-fuzz -DQCONFORM_LIB_FUZZING_ENGINE="$LIB_FUZZING_ENGINE" \
  -DQCONFORM_BUILD_TESTS=OFF -DQCONFORM_WERROR=OFF "${prefix_path[@]}"
cmake --build "$build" --parallel "$jobs" --target qconform_fuzz_all

bin="$build/fuzz/bin"
zip_dir() {  # zip_dir ARCHIVE DIR: the files of DIR, flat (zip if installed, else python3)
  rm -f "$1"
  if command -v zip >/dev/null; then
    (cd "$2" && zip -q -j "$1" ./*)
  else
    python3 - "$1" "$2" <<'PY'
import sys, zipfile, pathlib
with zipfile.ZipFile(sys.argv[1], "w", zipfile.ZIP_DEFLATED) as z:
    for f in sorted(pathlib.Path(sys.argv[2]).iterdir()):
        if f.is_file():
            z.write(f, f.name)
PY
  fi
}

count=0
while read -r target; do
  [[ -n "$target" ]] || continue
  cp "$bin/$target" "$OUT/"
  for ext in dict options; do
    if [[ -f "$bin/$target.$ext" ]]; then cp "$bin/$target.$ext" "$OUT/"; fi
  done
  if [[ -d "$root/corpus/$target" ]] && compgen -G "$root/corpus/$target/*" >/dev/null; then
    zip_dir "$OUT/${target}_seed_corpus.zip" "$root/corpus/$target"
  fi
  count=$((count + 1))
done <"$bin/targets.txt"
echo "ossfuzz.sh: $count fuzz targets in $OUT"
