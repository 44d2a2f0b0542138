#!/usr/bin/env python3
"""Interop of Tessera's safetensors files with Python's safetensors package.

Usage: safetensors_interop.py TEST_BINARY [WORK_DIR]
       safetensors_interop.py --check-tessera-file FILE

TEST_BINARY is frontend_safetensors_test. With it this script
  1. runs SafetensorsInterop.WriteForPython, which saves from_tessera.safetensors
     in WORK_DIR, and reads that file with Python's safetensors, comparing every
     tensor with values computed here independently (bit for bit);
  2. writes from_python.safetensors with safetensors.numpy.save_file (and
     from_python_bf16.safetensors with safetensors.serialize_file, since numpy
     has no bfloat16) and runs SafetensorsInterop.ReadFromPython, which loads
     them in C++ and checks them against values stated there.
bfloat16 from Tessera is read with safetensors.deserialize (the library's own
parser, raw bytes) for the same reason.

Exits 77 (ctest's SKIP_RETURN_CODE) when numpy or safetensors cannot be
imported: create the environment with scripts/install-python-deps.
Prints "N passed, N failed" last.
"""

import os
import struct
import subprocess
import sys
import tempfile

SKIP = 77

try:
    import numpy as np
    import safetensors
    import safetensors.numpy
except ImportError as e:  # pragma: no cover - depends on the machine
    print(f"SKIP: {e}; create the Python environment with scripts/install-python-deps "
          "and run this with its python")
    sys.exit(SKIP)


def bits(array, unsigned):
    return np.ascontiguousarray(array).view(unsigned).tolist()


def f32_to_bf16_bits(x):
    # Exact for the values used (their low 16 bits are zero).
    (u,) = struct.unpack("<I", struct.pack("<f", x))
    assert u & 0xFFFF == 0, x
    return u >> 16


def check_tessera_file(path):
    """Raises AssertionError on the first mismatch; returns the checks run."""
    checks = 0

    def equal(name, got, want):
        nonlocal checks
        checks += 1
        if got != want:
            raise AssertionError(f"{name}: got {got!r}, want {want!r}")

    expected = {
        "f32": (np.arange(6, dtype=np.float32) * np.float32(0.25) - np.float32(0.5)).reshape(2, 3),
        # 1.5, -0.0, inf, NaN with payload 1: compared as bits below
        "f64": np.array([0x3FF8000000000000, 0x8000000000000000, 0x7FF0000000000000,
                         0x7FF8000000000001], dtype=np.uint64).view(np.float64),
        "f16": np.array([1.0, -2.5, 65504.0], dtype=np.float16),
        "i64": np.array([-(2**63), 0, 2**63 - 1], dtype=np.int64),
        "i32": np.array([-(2**31), 2**31 - 1], dtype=np.int32),
        "i16": np.array([-32768, 32767], dtype=np.int16),
        "i8": np.array([-128, 0, 127], dtype=np.int8),
        "u8": np.array([0, 255], dtype=np.uint8),
        "bool": np.array([True, False, False, True]),
        "c64": np.array([1 + 2j, -0.5 + 0j], dtype=np.complex64),
        "noncontig": np.arange(6, dtype=np.float32).reshape(2, 3).T,
        "scalar": np.array(7.0, dtype=np.float32),
        "empty": np.zeros((0, 3), dtype=np.float32),
        "tied_a": np.array([1.0, 2.0], dtype=np.float32),
    }
    with safetensors.safe_open(path, framework="np") as f:
        # The alias tied_b is not a tensor of the file: Python sees tied_a only.
        equal("keys", sorted(f.keys()), sorted(list(expected) + ["bf16"]))
        equal("metadata", f.metadata(), {
            "framework": "tessera",
            "note": "\u00fcnic\u00f6de",
            "tessera.aliases": '{"tied_b":"tied_a"}',
        })
        for name, want in expected.items():
            got = f.get_tensor(name)
            equal(f"{name} dtype", got.dtype, want.dtype)
            equal(f"{name} shape", got.shape, want.shape)
            width = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[got.dtype.itemsize]
            if got.dtype.kind == "c":
                width = np.uint32
            equal(f"{name} bits", bits(got, width), bits(want, width))

    with open(path, "rb") as f:
        raw = dict(safetensors.deserialize(f.read()))
    equal("bf16 dtype", raw["bf16"]["dtype"], "BF16")
    equal("bf16 shape", list(raw["bf16"]["shape"]), [2, 2])
    want = struct.pack("<4H", *(f32_to_bf16_bits(x) for x in (1.0, -2.0, 0.5, 3.140625)))
    equal("bf16 bytes", bytes(raw["bf16"]["data"]), want)
    return checks


def write_python_files(work_dir):
    tensors = {
        "f64": np.array([2.5, -0.0, np.inf], dtype=np.float64),
        "f32": (np.arange(6, dtype=np.float32) * np.float32(0.5) - np.float32(1.0)).reshape(2, 3),
        "f16": np.array([1.0, -2.5, 65504.0], dtype=np.float16),
        "i64": np.array([-(2**63), 1, 2**63 - 1], dtype=np.int64),
        "i32": np.array([-(2**31), 2**31 - 1], dtype=np.int32),
        "i16": np.array([-32768, 32767], dtype=np.int16),
        "i8": np.array([[-128, -1], [0, 127]], dtype=np.int8),
        "u8": np.array([0, 128, 255], dtype=np.uint8),
        "bool": np.array([True, False, True]),
        "c64": np.array([complex(1.0, 2.0), complex(0.0, -0.5)], dtype=np.complex64),
        "scalar": np.array(7.0, dtype=np.float32),
        "empty": np.zeros((0, 3), dtype=np.float32),
        "transposed": np.ascontiguousarray(np.arange(6, dtype=np.float32).reshape(2, 3).T),
    }
    safetensors.numpy.save_file(tensors, os.path.join(work_dir, "from_python.safetensors"),
                                metadata={"source": "numpy"})
    bf16 = np.array([f32_to_bf16_bits(1.0), f32_to_bf16_bits(-3.140625)], dtype=np.uint16)
    x = np.array([0.25], dtype=np.float32)
    safetensors.serialize_file({
        "bf16": safetensors.TensorSpec(dtype="bfloat16", shape=[2], data_ptr=bf16.ctypes.data,
                                       data_len=bf16.nbytes),
        "x": safetensors.TensorSpec(dtype="float32", shape=[1], data_ptr=x.ctypes.data,
                                    data_len=x.nbytes),
    }, os.path.join(work_dir, "from_python_bf16.safetensors"))


def run_gtest(binary, test, work_dir):
    env = dict(os.environ, TESSERA_SAFETENSORS_INTEROP_DIR=work_dir)
    env.setdefault("TESSERA_PLUGINS", "cpu")
    proc = subprocess.run([binary, f"--gtest_filter={test}"], env=env, capture_output=True,
                          text=True, check=False)
    if proc.returncode != 0 or "[  PASSED  ] 1 test" not in proc.stdout:
        sys.stdout.write(proc.stdout + proc.stderr)
        raise AssertionError(f"{test} failed (exit {proc.returncode})")


def main(argv):
    if len(argv) == 3 and argv[1] == "--check-tessera-file":
        checks = check_tessera_file(argv[2])
        print(f"{checks} passed, 0 failed")
        return 0
    if len(argv) not in (2, 3):
        print(__doc__)
        return 2
    binary = argv[1]
    with tempfile.TemporaryDirectory(prefix="tessera-interop-") as scratch:
        work_dir = argv[2] if len(argv) == 3 else scratch
        os.makedirs(work_dir, exist_ok=True)
        steps = [
            ("C++ writes, Python reads",
             lambda: (run_gtest(binary, "SafetensorsInterop.WriteForPython", work_dir),
                      check_tessera_file(os.path.join(work_dir, "from_tessera.safetensors")))),
            ("Python writes, C++ reads",
             lambda: (write_python_files(work_dir),
                      run_gtest(binary, "SafetensorsInterop.ReadFromPython", work_dir))),
        ]
        passed = failed = 0
        for name, step in steps:
            try:
                step()
                passed += 1
                print(f"PASS {name}")
            except Exception as e:  # noqa: BLE001 - report every step
                failed += 1
                print(f"FAIL {name}: {e}")
    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
