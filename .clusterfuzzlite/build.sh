#!/bin/bash -eu
# ClusterFuzzLite entry point: the build lives in the project (scripts/ossfuzz.sh).
exec "$SRC/qconform/scripts/ossfuzz.sh"
