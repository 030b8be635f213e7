#!/usr/bin/env bash
# Build ASTRA-sim's analytical network backend (Release) from an ASTRA-sim source checkout:
#   <build dir>/bin/AstraSim_Analytical_Congestion_Unaware
#   <build dir>/bin/AstraSim_Analytical_Congestion_Aware
# These are external reference tools: the source, the build dir and the binaries stay OUTSIDE
# this project tree (the script refuses paths inside it); no build output is ever committed.
#
# Usage: benchmarks/build_astra_sim.sh [ASTRA_SIM_SRC] [BUILD_DIR]
#   ASTRA_SIM_SRC  ASTRA-sim checkout with its submodules (extern/graph_frontend/chakra,
#                  extern/network_backend/analytical, extern/remote_memory_backend/analytical,
#                  extern/helper/fmt, extern/helper/spdlog); default /work/astra/astra-sim
#   BUILD_DIR      default $ASTRA_SIM_SRC/../build
#   YAML_CPP_SRC   (env, optional) a yaml-cpp source checkout. ASTRA-sim's CMake otherwise
#                  git-clones github.com/jbeder/yaml-cpp (FetchContent) at configure time;
#                  set this on a machine without that access.
#   JOBS           (env, optional) parallel compile jobs; default nproc
# Needs (Debian): apt-get install cmake g++ make protobuf-compiler libprotobuf-dev
#   (cmake >= 3.22; tested with Debian 12: cmake 3.25, g++ 12, protobuf 3.21, ASTRA-sim 518bd513)
set -euo pipefail

SRC=$(realpath "${1:-${ASTRA_SIM_SRC:-/work/astra/astra-sim}}")
BUILD=$(realpath -m "${2:-${ASTRA_SIM_BUILD:-$SRC/../build}}")
PROJECT=$(cd "$(dirname "$0")/.." && pwd -P)
for p in "$SRC" "$BUILD"; do
  case "$p/" in "$PROJECT"/*) echo "refusing: $p is inside the project tree $PROJECT" >&2; exit 1;; esac
done
for t in cmake g++ make protoc; do
  command -v $t >/dev/null || { echo "missing $t: apt-get install cmake g++ make protobuf-compiler libprotobuf-dev" >&2; exit 1; }
done
CHAKRA=$SRC/extern/graph_frontend/chakra
ANALYTICAL=$SRC/extern/network_backend/analytical
for d in "$CHAKRA/schema/protobuf" "$ANALYTICAL/include" "$SRC/extern/helper/fmt/include" "$SRC/extern/helper/spdlog/include"; do
  [ -d "$d" ] || { echo "incomplete checkout: $d missing (git submodule update --init --recursive)" >&2; exit 1; }
done

# Compatibility fixes for older submodule snapshots (each is skipped when the checkout does not need it):
# 1. analytical backend before e8c5119 builds its own extern/yaml-cpp submodule; ASTRA-sim now
#    provides the yaml-cpp target itself, so an empty submodule dir gets a no-op CMakeLists.
if grep -q 'extern/yaml-cpp' "$ANALYTICAL/CMakeLists.txt" && [ ! -e "$ANALYTICAL/extern/yaml-cpp/CMakeLists.txt" ]; then
  mkdir -p "$ANALYTICAL/extern/yaml-cpp"
  echo "# no-op: the yaml-cpp target comes from ASTRA-sim's top-level CMakeLists" > "$ANALYTICAL/extern/yaml-cpp/CMakeLists.txt"
fi
# 2. chakra feeder_v3 snapshots (e.g. f37c2bb) declare the ETFeeder alias inside namespace
#    FeederV3, while ASTRA-sim uses Chakra::ETFeeder: move the alias out to namespace Chakra.
FEEDER_H=$CHAKRA/src/feeder_v3/et_feeder.h
if perl -0ne 'exit !/using ETFeeder = FeederV3::ETFeeder;\n\n\} \/\/ namespace FeederV3/' "$FEEDER_H"; then
  perl -0pi -e 's/using ETFeeder = FeederV3::ETFeeder;\n\n\} \/\/ namespace FeederV3\n/} \/\/ namespace FeederV3\nusing ETFeeder = FeederV3::ETFeeder;\n/' "$FEEDER_H"
fi

# Chakra's protobuf schema -> C++, written into the ASTRA-sim source as its build.sh does.
PB=$CHAKRA/schema/protobuf
[ "$PB/et_def.pb.cc" -nt "$PB/et_def.proto" ] || protoc et_def.proto --proto_path="$PB" --cpp_out="$PB"

cmake -S "$SRC/build/astra_analytical" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DBUILDTARGET=all \
  ${YAML_CPP_SRC:+-DFETCHCONTENT_SOURCE_DIR_YAML-CPP="$(realpath "$YAML_CPP_SRC")" -DFETCHCONTENT_FULLY_DISCONNECTED=ON}
cmake --build "$BUILD" -j "${JOBS:-$(nproc)}"
ls -l "$BUILD"/bin/AstraSim_Analytical_Congestion_*
