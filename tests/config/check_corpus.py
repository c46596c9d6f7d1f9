#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Runs `zecoll-config check` on every configuration of a corpus directory and compares what it
prints, exactly, with the file's sidecar NAME.expected (TAP output).

  check_corpus.py --tool BIN bad DIR [--min N]   each DIR/NAME.yaml must fail (exit 2, nothing on
                                                 stdout) and print exactly NAME.expected on stderr
  check_corpus.py --tool BIN good DIR            each must pass (exit 0) and print exactly
                                                 NAME.expected; NAME.env (K=V lines) is its
                                                 environment; the output must load back (checked
                                                 again) to the same values
  --update rewrites the .expected files from what the tool prints now (review the diff!).

The tool runs in DIR with the file's bare name, so messages read "NAME.yaml:LINE:COLUMN: ...", and
with no ZECOLL_* variable but those of NAME.env."""
import argparse
import glob
import os
import re
import subprocess
import sys
import tempfile

ORIGIN = re.compile(r"\s+# (default|env ZECOLL_\w+|.+:\d+)$")


def run(tool, cwd, name, extra_env):
    env = {k: v for k, v in os.environ.items() if not k.startswith("ZECOLL_")}
    env.update(extra_env)
    return subprocess.run([tool, "check", name], cwd=cwd, env=env, capture_output=True, timeout=60)


def strip_origins(text):
    return "\n".join(ORIGIN.sub("", line) for line in text.splitlines()[1:])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tool", required=True)
    ap.add_argument("--min", type=int, default=1)
    ap.add_argument("--update", action="store_true")
    ap.add_argument("mode", choices=["bad", "good"])
    ap.add_argument("dir")
    a = ap.parse_args()
    a.tool = os.path.abspath(a.tool)
    files = sorted(glob.glob(os.path.join(a.dir, "*.yaml")))
    n, fails = 0, 0

    def ok(cond, text):
        nonlocal n, fails
        n += 1
        if not cond:
            fails += 1
        print(f"{'' if cond else 'not '}ok {n} - {text}")
        return cond

    ok(len(files) >= a.min, f"{len(files)} configurations in {a.dir} (at least {a.min})")
    for path in files:
        name = os.path.basename(path)
        exp_path = path[:-5] + ".expected"
        env = {}
        if os.path.exists(path[:-5] + ".env"):
            for line in open(path[:-5] + ".env"):
                if line.strip() and not line.startswith("#"):
                    k, v = line.rstrip("\n").split("=", 1)
                    env[k] = v
        r = run(a.tool, a.dir, name, env)
        out = r.stdout.decode("utf-8", "backslashreplace")
        err = r.stderr.decode("utf-8", "backslashreplace")
        got = err if a.mode == "bad" else out
        if a.update:
            open(exp_path, "w").write(got)
        want = open(exp_path).read() if os.path.exists(exp_path) else None
        if a.mode == "bad":
            good = ok(r.returncode == 2 and not out and got == want, f"{name}: exit 2 and exactly its messages")
        else:
            others = [l for l in err.splitlines() if ": warning: " not in l]
            good = ok(r.returncode == 0 and got == want and not others, f"{name}: exit 0 and exactly its effective configuration")
            if good:
                with tempfile.TemporaryDirectory() as tmp:
                    open(os.path.join(tmp, "again.yaml"), "w").write(out)
                    r2 = run(a.tool, tmp, "again.yaml", {})
                    again = r2.stdout.decode("utf-8", "backslashreplace")
                    good = ok(r2.returncode == 0 and strip_origins(again) == strip_origins(out),
                              f"{name}: its effective configuration loads back to the same values")
        if not good:
            print(f"# exit {r.returncode}\n# got:\n" + "".join(f"#   {l}\n" for l in got.splitlines()) +
                  "# want:\n" + "".join(f"#   {l}\n" for l in (want or "(no .expected file)").splitlines()) +
                  ("" if a.mode == "bad" else "# stderr:\n" + "".join(f"#   {l}\n" for l in err.splitlines())))
    print(f"1..{n}")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
