#!/usr/bin/env bash
# The device check of the measuring half (docs/kernels-db.md, "The device check"): on a machine
# with one NVIDIA GPU, in one call of under 8 minutes:
#   1. build phantora if BUILD_DIR has none (needs the packages of scripts/setup.sh; no network)
#   2. `phantora db profile`: the example GPT's launches (run under the simulator first, every
#      distinct kernel launch recorded and relaunched) plus a GEMM shape sweep, then
#      scripts/attention_sweep.py the same way (the attention sweep); a profile that ends with
#      status 6 (a relaunched kernel left the GPU unusable) is run again for the rest
#   3. the example GPT on the real GPU (its own step times)
#   4. the same under `phantora run --gpu <this GPU>`, with the fresh database and without it
#   5. $OUT/comparison.md: step times per step, GPU time by source, `db calibrate` per family
# On a GPU it also runs the job for 6 and 11 steps under torch.profiler and under phantora (one
# steady step's GPU time, kernel by kernel, on both sides), times the sweep's GEMMs through
# torch.matmul (scripts/gemm_timing.py: gemm-timing.txt) and PyTorch's fill, copy and add by
# size (scripts/memory_timing.py: memory-timing.txt), attention through flash and cuDNN at
# modded-nanogpt's and the GPT's shapes (scripts/attention_timing.py: attention-timing.txt),
# cuDNN's convolutions at ResNet-50's shapes (scripts/conv_timing.py: conv-timing.txt) and
# ResNet-50 training steps (examples/resnet/train.py: resnet.txt; these scripts under `phantora
# run` give the model's side) and samples the GPU's clocks, power
# and clock-event reasons every 100 ms throughout (nvidia-smi: clocks.csv).
# A step that fails is reported and the check goes on with the steps that do not need it.
# --dry-run plays steps 2 and 4 against the stand-in GPU (tests/profiler/standin_gpu.cpp, every
# operation 10 us) with a small CUDA job instead of the GPT, and skips the attention sweep and
# step 3 (they need PyTorch and a GPU).
#
#   scripts/gpu-check.sh [--dry-run] [--python PY] [--build-dir DIR] [--out DIR]
set -euo pipefail
cd "$(dirname "$0")/.."

DRY=0
PY=${PYTHON:-python3}
BUILD=${BUILD_DIR:-build}
OUT=${OUT:-runs/gpu-check}
while (($#)); do
  case $1 in
    --dry-run) DRY=1 ;;
    --python) PY=$2; shift ;;
    --build-dir) BUILD=$2; shift ;;
    --out) OUT=$2; shift ;;
    *) echo "gpu-check: unknown argument '$1' (see the header of $0)" >&2; exit 2 ;;
  esac
  shift
done
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
export PATH=/usr/local/cuda/bin:$PATH
PHANTORA=$BUILD/tools/phantora
STANDIN=$BUILD/tests/profiler/libphantora_standin_gpu.so

if [ ! -x "$PHANTORA" ] || { [ $DRY = 1 ] && [ ! -f "$STANDIN" ]; }; then
  echo "gpu-check: building into $BUILD"
  # On the GPU machine only phantora itself: the tests (GoogleTest, the stand-in) are not needed.
  TESTS=OFF TARGETS=(phantora)
  [ $DRY = 1 ] && TESTS=ON TARGETS=(phantora phantora_standin_gpu phantora_profiler_programs)
  if ! cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPHANTORA_BUILD_BENCH=OFF \
      -DPHANTORA_BUILD_TESTS=$TESTS >"$OUT/cmake.log" 2>&1; then
    tail -20 "$OUT/cmake.log"
    echo "gpu-check: configuring failed ($OUT/cmake.log): this machine lacks the packages" \
         "scripts/setup.sh installs; install them, or bring a build directory (--build-dir)" >&2
    exit 1
  fi
  cmake --build "$BUILD" -j"$(nproc)" --target "${TARGETS[@]}"
fi

# The GEMM sweep (scripts/gpu-check-sweep.txt: square bf16 shapes, the example GPT's, every GEMM
# of TorchTitan's Llama 3 8B step, partial waves and few-tile long-K shapes), kept beside the
# results.
SWEEP=$OUT/sweep.txt
cp scripts/gpu-check-sweep.txt "$SWEEP"

if [ $DRY = 1 ]; then
  JOB=("$BUILD/tests/profiler/programs/gemm_copy")
  # Every stand-in operation takes 10 us: a millisecond sustained is 100 launches, not the
  # 50,000 of the real check's default 500 ms.
  PROFILE_LIB=(--cuda-library "$STANDIN" --sustain-ms 1)
  export PHANTORA_STANDIN_GPU_DEFAULT_US=10
else
  GPT=("$PY" examples/gpt.py --model gpt-small --batch-size 8)
  JOB=("${GPT[@]}" --steps 6)
  PROFILE_LIB=()
fi
DB=$OUT/kernels.db
rm -f "$DB" "$DB-wal" "$DB-shm"

# One profile, run again (without the job: its launches are kept) while a relaunched kernel
# leaves the GPU unusable (status 6; that signature is skipped from then on). Status 5: some
# signatures failed to measure; the others were written and the check goes on.
profile() {
  local status=0 tries=0
  "$PHANTORA" db profile --db "$DB" "${PROFILE_LIB[@]}" "$@" >>"$OUT/profile.log" 2>&1 || status=$?
  while [ $status = 6 ] && [ $tries -lt 5 ]; do
    tries=$((tries + 1))
    status=0
    "$PHANTORA" db profile --db "$DB" "${PROFILE_LIB[@]}" >>"$OUT/profile.log" 2>&1 || status=$?
  done
  if [ $status != 0 ] && [ $status != 5 ]; then
    tail -20 "$OUT/profile.log"; echo "gpu-check: db profile failed with status $status" >&2
    FAILED+=("db profile $*")
  fi
}
FAILED=()
: >"$OUT/profile.log"
if [ $DRY = 0 ]; then
  # The clocks under the check's own load: what the GPU sustains, and why not more
  # (clocks_event_reasons: power cap, thermal, ...). Stopped when the script ends.
  # (clocks_event_reasons since driver 535, clocks_throttle_reasons before).
  REASONS=clocks_event_reasons.active
  nvidia-smi --query-gpu=$REASONS --format=csv >/dev/null 2>&1 ||
    REASONS=clocks_throttle_reasons.active
  nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,power.limit,temperature.gpu,utilization.gpu,$REASONS \
    --format=csv,nounits -lms 100 >"$OUT/clocks.csv" 2>"$OUT/clocks.err" &
  SAMPLER=$!
  trap 'kill $SAMPLER 2>/dev/null || true' EXIT
  echo "gpu-check: timing the sweep's GEMMs through torch.matmul"
  # 100 products per shape and pass: about 8 s of back-to-back GEMMs per pass, long enough for
  # the clock to settle where the power limit holds it.
  "$PY" scripts/gemm_timing.py --signatures "$SWEEP" --repetitions 100 >"$OUT/gemm-timing.txt" 2>&1 ||
    FAILED+=("gemm_timing.py")
  echo "gpu-check: timing fills, copies and adds by size (1 MiB to 2 GiB)"
  "$PY" scripts/memory_timing.py >"$OUT/memory-timing.txt" 2>&1 || FAILED+=("memory_timing.py")
  echo "gpu-check: timing attention through flash and cuDNN (modded-nanogpt's, the GPT's shapes)"
  "$PY" scripts/attention_timing.py >"$OUT/attention-timing.txt" 2>&1 ||
    FAILED+=("attention_timing.py")
  # The example GPT's attention (gpt-small: 8 x 12 heads of 64 over 1,024 tokens), which the
  # newest torch runs through cuDNN on Hopper: a cuDNN call is no launch `db profile` replays.
  "$PY" scripts/attention_timing.py --batch 8 --heads 12 --tokens 1024 --head-dim 64 \
    >>"$OUT/attention-timing.txt" 2>&1 || FAILED+=("attention_timing.py (the GPT's shape)")
  # cuDNN's convolutions pass by pass at ResNet-50's shapes (fp16 channels-last, TF32 NCHW),
  # and the whole ResNet-50 step both ways: docs/accuracy.md, "Convolutional networks".
  echo "gpu-check: timing convolutions (ResNet-50's shapes) and ResNet-50 steps"
  "$PY" scripts/conv_timing.py >"$OUT/conv-timing.txt" 2>&1 || FAILED+=("conv_timing.py")
  for MODE in "" --amp; do
    "$PY" examples/resnet/train.py $MODE >>"$OUT/resnet.txt" 2>&1 ||
      FAILED+=("examples/resnet/train.py $MODE")
  done
fi
echo "gpu-check: profiling the job and the GEMM sweep (log: $OUT/profile.log)"
profile --signatures "$SWEEP" -- "${JOB[@]}"
if [ $DRY = 1 ]; then
  echo "dry run: no attention sweep (it needs PyTorch)" | tee -a "$OUT/profile.log"
else
  echo "gpu-check: profiling the attention sweep"
  profile -- "$PY" scripts/attention_sweep.py
fi
GPU=$(sed -n 's/.*recorded as \([a-z0-9-]*\)$/\1/p' "$OUT/profile.log" | head -1)
echo "gpu-check: measured as $GPU"

if [ $DRY = 1 ]; then
  echo "dry run: no real GPU run" >"$OUT/real.log"
else
  echo "gpu-check: the job on the real GPU"
  "${JOB[@]}" >"$OUT/real.log" 2>&1 || FAILED+=("the job on the real GPU")
  # Its kernels under torch.profiler, for 6 and for 11 steps: the difference is one steady
  # step's GPU time kernel by kernel (scripts/gpu_kernel_times.py), set beside the simulated
  # runs of the same two lengths in comparison.md.
  for n in 6 11; do
    echo "gpu-check: the job's kernels on the real GPU, $n steps (torch.profiler)"
    "$PY" scripts/gpu_kernel_times.py --out "$OUT/real-kernels-$n.json" -- \
      "${GPT[@]:1}" --steps $n >"$OUT/real-kernels-$n.log" 2>&1 ||
      FAILED+=("torch.profiler of the job, $n steps")
  done
fi
# The GPU's preset as the profile recorded it; where no profile started, h200 (the GPU this
# check was sized on), said so.
if [ -z "$GPU" ]; then
  GPU=h200
  echo "gpu-check: no profile named this GPU's preset; simulating it as h200" >&2
fi
for mode in db model; do
  echo "gpu-check: the job under phantora run ($mode)"
  DBARG=()
  [ $mode = db ] && DBARG=(--kernel-db "$DB")
  "$PHANTORA" run --gpu "$GPU" "${DBARG[@]}" --out "$OUT/sim-$mode" -- "${JOB[@]}" \
    >"$OUT/sim-$mode.log" 2>&1 || FAILED+=("phantora run ($mode)")
done
if [ $DRY = 0 ]; then
  echo "gpu-check: the job under phantora run (model), 11 steps"
  "$PHANTORA" run --gpu "$GPU" --out "$OUT/sim-model-11" -- "${GPT[@]}" --steps 11 \
    >"$OUT/sim-model-11.log" 2>&1 || FAILED+=("phantora run (model, 11 steps)")
fi
"$PHANTORA" db calibrate "$DB" >"$OUT/calibrate.txt" || FAILED+=("db calibrate")
"$PY" scripts/gpu_check_compare.py --out "$OUT" >"$OUT/comparison.md" || FAILED+=("comparison")
cat "$OUT/comparison.md"
if ((${#FAILED[@]})); then
  printf 'gpu-check: failed: %s\n' "${FAILED[@]}" >&2
  exit 1
fi
