#!/usr/bin/env python3
"""Per rule of data/rules.toml: the real cases (../shared/corpus-real*) whose incidents it names.

  scripts/rules-on-real-cases.py [--bin target/fast/faultline] [--since COMMIT]

Runs `analyze --format json` on every case (SOURCE.md and expected.json left out) and lists,
per rule, the cases where an incident's root cause carries that rule id. With --since, only the
rules added after COMMIT are listed, and those named on fewer than two cases are flagged (the
done-when of issue 33: a rule fires on two real cases or on rows of its emitter's vocabulary).
"""
import argparse, glob, json, os, re, subprocess, sys

ap = argparse.ArgumentParser()
ap.add_argument("--bin", default="target/fast/faultline")
ap.add_argument("--shared", default="../shared")
ap.add_argument("--since")
a = ap.parse_args()

ids = re.findall(r'^id = "([^"]+)"', open("data/rules.toml").read(), re.M)
if a.since:
    old = subprocess.run(["git", "show", f"{a.since}:data/rules.toml"], capture_output=True, text=True).stdout
    before = set(re.findall(r'^id = "([^"]+)"', old, re.M))
    ids = [i for i in ids if i not in before]
cases = sorted(d for d in glob.glob(os.path.join(a.shared, "corpus-real*", "*")) if os.path.exists(os.path.join(d, "expected.json")))
if not cases:
    print(f"no real cases under {a.shared}: skipped")
    sys.exit(0)
fired = {i: [] for i in ids}
for d in cases:
    files = sorted(os.path.join(d, f) for f in os.listdir(d) if f not in ("SOURCE.md", "expected.json"))
    p = subprocess.run([a.bin, "analyze", "--format", "json", *files], capture_output=True)
    try:
        rep = json.loads(p.stdout)
    except Exception:
        print(f"{d}: no JSON", file=sys.stderr)
        continue
    name = os.path.basename(os.path.dirname(d)) + "/" + os.path.basename(d)
    for inc in rep.get("incidents", []):
        r = (inc.get("root_cause") or {}).get("rule")
        if r in fired and name not in fired[r]:
            fired[r].append(name)
few = 0
for i in ids:
    n = len(fired[i])
    flag = "" if n >= 2 else "  <- fewer than two real cases"
    few += n < 2
    print(f"{i:34} {n:3}{flag}")
    for c in fired[i]:
        print(f"    {c}")
print(f"{len(ids)} rule(s), {few} named on fewer than two real cases")
