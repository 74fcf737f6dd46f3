#!/usr/bin/env bash
# The GPU check on a machine with an NVIDIA GPU, in one command (docs/gpu-check.md):
#   bash grader/dev/gpu_check_device.sh        with carry [".gpucheck"] (made here by `make gpu-check-carry`)
# That machine's image has CUDA, PyTorch and nvidia-smi but reaches no network: what it lacks comes from the carry.
# Writes $OUT/gpu-check.md, $OUT/gpu-check.json and $OUT/device-log.txt. Extra arguments go to gpu-check.
set -u
CARRY=${CARRY:-.gpucheck}
OUT=${OUT:-build/gpu-check}
PREFIX=${PREFIX:-/usr/local}  # where Boost goes when the image has none
SITE=${SITE:-/tmp/site}       # where the carried wheels are installed
SYSTEM=${SYSTEM:-1}           # 0: touch nothing outside PREFIX and SITE (no ldconfig; a trial run off the device)
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1

check() {
  echo "== $(date -u '+%F %T') on $(hostname): $(nproc) cores; carry $CARRY"
  nvidia-smi 2>&1 | head -20
  [ -x /usr/local/cuda/bin/nvcc ] && export PATH="/usr/local/cuda/bin:$PATH"
  echo "nvcc: $(command -v nvcc || echo none); python3: $(command -v python3) $(python3 -V 2>&1); g++: $(g++ -dumpfullversion 2>&1)"
  echo "bwrap: $(command -v bwrap || echo none); /dev/nvidia*: $(ls /dev/nvidia* 2>/dev/null | tr '\n' ' ')"

  # Boost.Context for the CPU runtime (grading's own runtime), from Debian's packages, under $PREFIX only: files that
  # are not there yet, nothing of the image's replaced
  if [ -n "${FORCE_BOOST:-}" ] || { [ ! -e /usr/include/boost/context/fiber.hpp ] && [ ! -e "$PREFIX/include/boost/context/fiber.hpp" ]; }; then
    unpacked=$(mktemp -d)
    for deb in "$CARRY"/debs/*.deb; do dpkg -x "$deb" "$unpacked" || echo "could not unpack $deb"; done
    mkdir -p "$PREFIX/include" "$PREFIX/lib"
    cp -rn "$unpacked/usr/include/boost" "$PREFIX/include/" && cp -Pn "$unpacked"/usr/lib/*/libboost_context.* "$PREFIX/lib/"
    [ "$SYSTEM" = 1 ] && ldconfig
    echo "Boost.Context unpacked under $PREFIX: $(ls "$PREFIX"/lib/libboost_context.* 2>&1 | tr '\n' ' ')"
  fi

  # the driver's libcuda for grading workers, whose environment keeps no LD_LIBRARY_PATH (grader/common/environment.py)
  if [ "$SYSTEM" = 1 ] && ! ldconfig -p | grep -q 'libcuda\.so\.1 '; then
    for dir in ${LD_LIBRARY_PATH//:/ } /usr/local/nvidia/lib64 /usr/local/nvidia/lib; do
      [ -e "$dir/libcuda.so.1" ] && echo "$dir" >> /etc/ld.so.conf.d/zz-gpu-check.conf
    done
    ldconfig
    echo "libcuda.so.1 in ld.so.cache: $(ldconfig -p | grep -c 'libcuda\.so\.1 ')"
  fi

  # the pure-Python packages grading was tested with (pytest, rich, ...), over the image's own versions
  if ls "$CARRY"/whl/*.whl >/dev/null 2>&1; then
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target "$SITE" \
      "$CARRY"/whl/*.whl && export PYTHONPATH="$SITE"
  fi

  cpu=()
  [ -f "$CARRY/cpu-report.json" ] && cpu=(--cpu-from "$CARRY/cpu-report.json")
  samples=()
  [ -d "$CARRY/cuda-samples" ] && samples=(--samples "$CARRY/cuda-samples")
  # 540 s: ten minutes less the time to copy $OUT back; gpu-check starts no part after --budget (420 s)
  # and stops gradings at --limit (510 s), then writes its report
  timeout 540 python3 -m grader gpu-check "${samples[@]}" --out "$OUT" "${cpu[@]}" "$@"
  status=$?
  echo "== gpu-check exit status $status at $(date -u '+%T')"
  return $status
}

# everything printed goes to the reply's tail and to $OUT/device-log.txt (tee ends before the script does)
check "$@" 2>&1 | tee "$OUT/device-log.txt"
exit "${PIPESTATUS[0]}"
