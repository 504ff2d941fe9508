#!/usr/bin/env python3
"""Tabulates a `make bench` run: per cell the median of each driver, the ratio zram_rs / C
(throughput; above 1 is better for zram_rs) with the min-max of the per-repetition ratios,
system time per GiB from fio's own accounting, the seed experiment, memory, the rep-stosq
limit and the host instruction counts. Writes results.csv, results.json and ratios.png."""

import csv
import json
import statistics
import sys
from collections import defaultdict
from pathlib import Path

out = Path(sys.argv[1])
accel, clock = "tcg", "wall"
if (out / "clock.txt").exists():
    accel, clock = (out / "clock.txt").read_text().split()
timing = {"wall": f"QEMU {accel.upper()}, wall clock",
          "icount": f"QEMU {accel.upper()}, clock from guest instruction counts (icount)"}[clock]
log = (out / "console.log").read_text(errors="replace").splitlines()

# fio terse v3: read kB 6, read KiB/s 7, read runtime ms 9, read mean latency us 40; write kB
# 47, KiB/s 48, runtime 50, mean latency 81; usr% 88, sys% 89 (1-based).
runs = defaultdict(lambda: defaultdict(dict))  # cell -> driver -> rep -> (bw, sys_s_per_gib, lat_us)
seed = defaultdict(dict)
memory = defaultdict(dict)
writeback = defaultdict(dict)
readback = defaultdict(dict)
writeback_compressed = defaultdict(dict)
readback_compressed = defaultdict(dict)
recompress = defaultdict(dict)
dict_write = defaultdict(dict)
dict_read = defaultdict(dict)
dict_size = defaultdict(dict)
recompressed_size = defaultdict(dict)
table = {}
stosq = None
header = ""
profiles = defaultdict(lambda: defaultdict(list))  # cell -> driver -> [(percent, symbol)]
for line in log:
    words = line.split(" ", 4)
    if line.startswith("BENCH: reps"):
        header = line
    elif line.startswith("RESULT ") and len(words) == 5:
        _, cell, driver, rep, terse = words
        f = terse.split(";")
        if len(f) < 89:
            continue
        read_kb, write_kb = float(f[5]), float(f[46])
        if write_kb > 0:
            kb, bw, runtime, lat = write_kb, float(f[47]), float(f[49]), float(f[80])
        else:
            kb, bw, runtime, lat = read_kb, float(f[6]), float(f[8]), float(f[39])
        sys_pct = float(f[88].rstrip("%"))
        gib = kb / (1024 * 1024)
        sys_per_gib = (sys_pct / 100.0) * (runtime / 1000.0) / gib if gib else 0.0
        runs[cell][driver][int(rep)] = (bw, sys_per_gib, lat)
    elif line.startswith("SEED "):
        _, driver, rep, seconds = line.split()
        seed[driver][int(rep)] = 100 * 1024 * 1024 / float(seconds) / 1e6  # MB/s
    elif line.startswith("MEMORY "):
        _, driver, rep, used = line.split()
        memory[driver][int(rep)] = int(used)
    elif line.startswith("WRITEBACK "):
        _, driver, rep, written, read = line.split()
        writeback[driver][int(rep)] = int(written)
        readback[driver][int(rep)] = int(read)
    elif line.startswith("WRITEBACK_COMPRESSED "):
        _, driver, rep, written, read = line.split()
        writeback_compressed[driver][int(rep)] = int(written)
        readback_compressed[driver][int(rep)] = int(read)
    elif line.startswith("RECOMPRESS "):
        _, driver, rep, rate, before, after = line.split()
        recompress[driver][int(rep)] = int(rate)
        recompressed_size[driver][int(rep)] = int(after)
    elif line.startswith("DICT "):
        _, driver, rep, written, read, size = line.split()
        dict_write[driver][int(rep)] = int(written)
        dict_read[driver][int(rep)] = int(read)
        dict_size[driver][int(rep)] = int(size)
    elif line.startswith("TABLE "):
        _, driver, size, pages = line.split()
        table[driver] = int(size) / int(pages)
    elif line.startswith("PROFILE "):
        _, cell, driver, percent, symbol = line.split()[:5]
        profiles[cell][driver].append((percent, symbol))
    elif line.startswith("STOSQ "):
        stosq = float(line.split()[1])


def summarise(per_driver):
    c, rs = per_driver.get("zram", {}), per_driver.get("zram_rs", {})
    reps = sorted(set(c) & set(rs))
    if not reps:
        return None
    value = lambda d, r: d[r][0] if isinstance(d[r], tuple) else d[r]
    ratios = [value(rs, r) / value(c, r) for r in reps]
    return {
        "c_median": statistics.median(value(c, r) for r in reps),
        "rs_median": statistics.median(value(rs, r) for r in reps),
        "ratio_median": statistics.median(ratios),
        "ratio_min": min(ratios),
        "ratio_max": max(ratios),
        "reps": len(reps),
    }


rows = []
for cell in runs:
    s = summarise(runs[cell])
    if not s:
        continue
    sys_c = statistics.median(v[1] for v in runs[cell]["zram"].values())
    sys_rs = statistics.median(v[1] for v in runs[cell]["zram_rs"].values())
    # Mean latency per I/O, C over zram_rs (above 1: zram_rs faster): finer than fio's
    # millisecond runtimes, which matters for short runs under icount.
    reps = sorted(set(runs[cell]["zram"]) & set(runs[cell]["zram_rs"]))
    lat_ratio = statistics.median(runs[cell]["zram"][r][2] / runs[cell]["zram_rs"][r][2] for r in reps)
    rows.append({"cell": cell, "unit": "MiB/s", **{k: (v / 1024 if "median" in k and "ratio" not in k else v) for k, v in s.items()},
                 "sys_s_per_gib_c": sys_c, "sys_s_per_gib_rs": sys_rs, "latency_ratio": lat_ratio})
seed_summary = summarise(seed)
if seed_summary:
    rows.append({"cell": "seed: dd of 100 MB same-filled", "unit": "MB/s", **seed_summary})
for name, data in (("writeback: writeback huge of 64 MiB", writeback),
                   ("writeback: read back from the backing device", readback),
                   ("writeback: compressed_writeback, idle, 64 MiB (7.x)", writeback_compressed),
                   ("writeback: read back compressed, decompressed (7.x)", readback_compressed),
                   ("recompress: type=idle, lzo to zstd, 64 MiB", recompress),
                   ("dict: zstd with a 64 KiB dictionary, write 32 MiB of text", dict_write),
                   ("dict: zstd with a 64 KiB dictionary, read back", dict_read)):
    summary = summarise(data)
    if summary:
        rows.append({"cell": name, "unit": "pages/s", **summary})
if "zram" in table and "zram_rs" in table:
    ratio = table["zram_rs"] / table["zram"] if table["zram"] else 0.0
    rows.append({"cell": "slot table: bytes per page (vmalloc area)", "unit": "bytes",
                 "c_median": table["zram"], "rs_median": table["zram_rs"],
                 "ratio_median": ratio, "ratio_min": ratio, "ratio_max": ratio, "reps": 1})
recompressed_summary = summarise(recompressed_size)
if recompressed_summary:
    rows.append({"cell": "recompress: compr_data_size after (equal is right)", "unit": "bytes",
                 **recompressed_summary})
dict_summary = summarise(dict_size)
if dict_summary:
    rows.append({"cell": "dict: compr_data_size (equal is right)", "unit": "bytes", **dict_summary})
memory_summary = summarise(memory)
if memory_summary:
    rows.append({"cell": "memory: mem_used_total, 256 MiB compressible", "unit": "bytes", **memory_summary})

with open(out / "results.csv", "w", newline="") as f:
    writer = csv.DictWriter(f, fieldnames=["cell", "unit", "c_median", "rs_median", "ratio_median",
                                           "ratio_min", "ratio_max", "reps", "sys_s_per_gib_c", "sys_s_per_gib_rs",
                                           "latency_ratio"])
    writer.writeheader()
    for row in rows:
        writer.writerow(row)

counts = {}
if (out / "callgrind.txt").exists():
    raw = dict(line.split() for line in (out / "callgrind.txt").read_text().splitlines() if line.strip())
    base = int(raw.get("none", 0))
    counts = {case: (int(total) - base) / 1000 for case, total in raw.items() if case != "none"}
json.dump({"header": header, "timing": timing, "rows": rows, "stosq_gb_s": stosq, "instructions_per_page": counts},
          open(out / "results.json", "w"), indent=2)

print(f"{header} ({timing})")
print(f"{'cell':<44} {'C median':>11} {'zram_rs':>11} {'rs/C':>6} {'min-max':>12} {'sys s/GiB C':>12} {'zram_rs':>8} {'lat C/rs':>9}")
for row in rows:
    extra = ""
    if "sys_s_per_gib_c" in row:
        extra = f" {row['sys_s_per_gib_c']:>12.2f} {row['sys_s_per_gib_rs']:>8.2f} {row['latency_ratio']:>9.3f}"
    print(f"{row['cell']:<44} {row['c_median']:>11.1f} {row['rs_median']:>11.1f} {row['ratio_median']:>6.2f} "
          f"{row['ratio_min']:>5.2f}-{row['ratio_max']:<5.2f}{extra}")
print("(throughput cells: rs/C above 1 means zram_rs is faster; memory: below 1 means it uses less;\n"
      " lat C/rs: mean latency per I/O of C over zram_rs, above 1 means zram_rs is faster)")
if stosq:
    print(f"rep stosq in the guest: {stosq:.2f} GB/s")
    for row in rows:
        if row["cell"].startswith("same/seqread/"):
            print(f"  {row['cell']}: C {row['c_median'] * 1.048576 / 1000 / stosq:.1%}, "
                  f"zram_rs {row['rs_median'] * 1.048576 / 1000 / stosq:.1%} of it")
if counts:
    print("host instructions per 4 KiB page (callgrind): zram_rs vs a C-style word loop")
    for kind in ["same", "middle", "last", "random"]:
        ours, loop = counts.get(f"scan-ours:{kind}"), counts.get(f"scan-loop:{kind}")
        if ours is not None and loop is not None:
            print(f"  scan, {kind:<7}: {ours:8.0f} vs {loop:8.0f}")
    if "fill-ours" in counts:
        print(f"  fill          : {counts['fill-ours']:8.0f} vs {counts['fill-loop']:8.0f}")

if profiles:
    with open(out / "profiles.txt", "w") as f:
        for cell, drivers in profiles.items():
            f.write(f"{cell}: kernel symbols by share of perf cpu-clock samples (whole guest)\n")
            c, rs = drivers.get("zram", []), drivers.get("zram_rs", [])
            for i in range(max(len(c), len(rs))):
                left = f"{c[i][0]:>7} {c[i][1][:50]:<50}" if i < len(c) else " " * 58
                right = f"{rs[i][0]:>7} {rs[i][1][:70]}" if i < len(rs) else ""
                f.write(f"  {left}  {right}\n")
    print(f"perf profiles (C left, zram_rs right): {out / 'profiles.txt'}")

try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(14, 6))
    names = [r["cell"] for r in rows]
    values = [r["ratio_median"] for r in rows]
    errors = [[r["ratio_median"] - r["ratio_min"] for r in rows], [r["ratio_max"] - r["ratio_median"] for r in rows]]
    ax.bar(range(len(rows)), values, yerr=errors, color=["#4c72b0" if v >= 1 else "#dd8452" for v in values])
    ax.axhline(1.0, color="black", linewidth=1)
    low = min(r["ratio_min"] for r in rows)
    high = max(r["ratio_max"] for r in rows)
    ax.set_ylim(min(0.8, low - 0.05), max(1.2, high + 0.05))
    ax.set_xticks(range(len(rows)))
    ax.set_xticklabels(names, rotation=75, ha="right", fontsize=7)
    ax.set_ylabel("zram_rs / C zram (median, min-max)")
    ax.set_title(f"zram_rs vs C zram, same VM boot ({timing})")
    fig.tight_layout()
    fig.savefig(out / "ratios.png", dpi=110)
except ImportError:
    print("matplotlib missing: no chart")
