#!/usr/bin/env python3
"""scripts/published_gemm_table.py and `phantora db calibrate --source imported` end to end, on a
small table written here in the published table's text-proto form (the figures are made up;
only the format is the published one's).

By hand:
  sm_90, b=1, m=n=k=4096 at 687,194,767,360,000 FLOP/s: 2 * 4096^3 / that = 200 us published.
  The GEMM model's price of 4096^3 bf16 on h100 (docs/cost-model.md, "GEMM", worked):
  1024 tiles in 8 waves, each of K + 207 (the tile's fixed cost) at the main loop's rate:
  4 + 1056 * 2 * 128^2 * (4096 + 207) / (989.4 T * 0.763 * (6144 + 207) / 6144) = 194.81 us:
  ratio 0.974.
  sm_90, b=2, m=256, n=1024, k=512 at 1e14 FLOP/s: 2 * 2 * 256 * 1024 * 512 / 1e14 = 5.36871 us,
  signature m=1024, n=256 (XLA's row-major dot is cuBLAS's column-major call with m and n
  swapped; its key is in upper case, as in other versions of the table).
  The sm_100 block and the f32 figures are not taken for --arch sm_90 --dtype bf16; with
  --dtype f32xf32->f32 the one f32 figure (1 FLOP/s) is a TF32 GEMM (XLA's default for f32).
"""
import csv
import os
import subprocess
import sys
import tempfile

TABLE = """constexpr char kDefaultMatmulPTable[] = R"pb(
  entries {
    key: "sm_100"
    value {
      entries {
        b: 1
        m: 4096
        n: 4096
        k: 4096
        flops { key: "bf16xbf16->bf16" value: 1 }
      }
    }
  }
  entries {
    key: "sm_90"
    value {
      entries {
        b: 1
        m: 4096
        n: 4096
        k: 4096
        flops { key: "bf16xbf16->bf16" value: 687194767360000 }
        flops { key: "f32xf32->f32" value: 1 }
      }
      entries {
        b: 2
        m: 256
        n: 1024
        k: 512
        flops { key: "BF16xBF16->BF16" value: 100000000000000 }
      }
    }
  }
)pb";
"""

failures = []


def expect(cond, what):
    print(("ok    " if cond else "FAIL  ") + what)
    if not cond:
        failures.append(what)


def main():
    repo, phantora = sys.argv[1], sys.argv[2]
    script = os.path.join(repo, "scripts", "published_gemm_table.py")
    with tempfile.TemporaryDirectory() as tmp:
        table = os.path.join(tmp, "table.h")
        with open(table, "w") as f:
            f.write(TABLE)
        out_csv = os.path.join(tmp, "rows.csv")
        p = subprocess.run([sys.executable, script, "--table", table, "--csv", out_csv,
                            "--phantora", phantora, "--gpu", "h100", "--rows"],
                           capture_output=True, text=True)
        print(p.stdout, p.stderr)
        expect(p.returncode == 0, "the script exits 0")
        with open(out_csv) as f:
            rows = list(csv.DictReader(f))
        expect(len(rows) == 2, "two sm_90 bf16 rows (sm_100 and f32 left out)")
        by_sig = {r["signature"]: r for r in rows}
        cube = ("gemm:m=4096,n=4096,k=4096,batch=1,a=bf16,b=bf16,c=bf16,compute=f32,op_a=n,"
                "op_b=n,beta=0,epilogue=none")
        thin = ("gemm:m=1024,n=256,k=512,batch=2,a=bf16,b=bf16,c=bf16,compute=f32,op_a=n,"
                "op_b=n,beta=0,epilogue=none")
        expect(cube in by_sig and abs(float(by_sig[cube]["mean_us"]) - 200.0) < 1e-9,
               "4096^3 at 687.19 TFLOP/s is 200 us")
        expect(thin in by_sig and abs(float(by_sig[thin]["mean_us"]) - 5.36870912) < 1e-9,
               "b=2 256x1024x512 at 100 TFLOP/s is 5.36871 us, m and n swapped")
        expect(all(r["source"] == "imported" for r in rows), "rows are imported, not measured")
        lines = p.stdout.splitlines()
        cube_line = [l for l in lines if l.endswith(cube)]
        expect(len(cube_line) == 1 and cube_line[0].split()[:3] == ["200.00", "194.81", "0.974"],
               "the cube's row: published 200.00, model 194.81 (by hand), ratio 0.974")
        expect(any(l.startswith("all ") and l.split()[1] == "2" for l in lines),
               "the summary counts both rows")

        # f32 dots are TF32 tensor-core GEMMs in XLA: 2 * 4096^3 at 1 FLOP/s, compute=tf32.
        f32_csv = os.path.join(tmp, "f32.csv")
        p = subprocess.run([sys.executable, script, "--table", table, "--csv", f32_csv,
                            "--dtype", "f32xf32->f32"], capture_output=True, text=True)
        with open(f32_csv) as f:
            f32_rows = list(csv.DictReader(f))
        expect(p.returncode == 0 and len(f32_rows) == 1 and
               f32_rows[0]["signature"] == cube.replace("a=bf16,b=bf16,c=bf16,compute=f32",
                                                        "a=f32,b=f32,c=f32,compute=tf32") and
               abs(float(f32_rows[0]["mean_us"]) - 2 * 4096**3 * 1e6) < 1,
               "--dtype f32xf32->f32: one row, a TF32 GEMM of 2 * 4096^3 FLOPs at 1 FLOP/s")

        # The default source is `measured`: imported rows are compared only when asked for.
        db = os.path.join(tmp, "t.db")
        subprocess.run([phantora, "db", "import", db, out_csv], check=True,
                       stdout=subprocess.DEVNULL)
        p = subprocess.run([phantora, "db", "calibrate", db], capture_output=True, text=True)
        expect(p.returncode == 0 and "gemm:" not in p.stdout,
               "db calibrate without --source compares no imported row")
        p = subprocess.run([phantora, "db", "calibrate", db, "--source", "imported"],
                           capture_output=True, text=True)
        expect(p.returncode == 0 and any(l.split()[:3] == ["h100", "gemm", "2"]
                                         for l in p.stdout.splitlines()),
               "db calibrate --source imported summarises the two h100 gemm rows")
        p = subprocess.run([phantora, "db", "calibrate", db, "--source", "guessed"],
                           capture_output=True, text=True)
        expect(p.returncode != 0 and "guessed" in p.stderr, "an unknown --source is refused")

        p = subprocess.run([sys.executable, script, "--table", table, "--arch", "sm_80"],
                           capture_output=True, text=True)
        expect(p.returncode != 0 and "sm_100, sm_90" in p.stderr,
               "an architecture the table lacks is refused, naming the ones it has")
        p = subprocess.run([sys.executable, script, "--table", os.path.join(tmp, "none.h")],
                           capture_output=True, text=True)
        expect(p.returncode != 0 and "cannot read --table" in p.stderr,
               "a missing table file is refused by name")
    print(f"{len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
