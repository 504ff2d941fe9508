#!/usr/bin/env python3
"""Tabulates a `make bench` run: per cell the median of each driver, the ratio zram_rs / C
(throughput; above 1 is better for zram_rs) with the min-max of the per-repetition ratios,
system time per GiB from fio's own accounting, the seed experiment, memory, the rep-stosq
limit and the host instruction counts. Writes results.csv, results.json and ratios.png, and for
the corpus cell corpus.csv and corpus.png (compression ratios per algorithm, kind and driver)."""

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
# (algorithm, variant) -> driver -> kind -> (pages, orig, compr, same, huge, verdict)
corpus = defaultdict(lambda: defaultdict(dict))
corpus_memory = defaultdict(dict)  # (algorithm, variant) -> driver -> mem_used_total
corpus_refused = []
# (algorithm, driver, unit) -> kind -> (pages, compr_data_size, verdict); -> mem_used_total
units = defaultdict(dict)
units_memory = {}
units_swap = defaultdict(dict)
# cell -> driver -> rep -> (reads, p50, p99, p99.9, p99.99 in ns, writers' KiB/s)
latency = defaultdict(lambda: defaultdict(dict))
# cell -> zram_rs's reads that waited for a decompression context (read_stat), per rep
latency_waited = defaultdict(dict)
# cell -> driver -> rep -> (reads, p50, p99, p99.9, max in ns, walks completed)
stats_reads = defaultdict(lambda: defaultdict(dict))
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
    elif line.startswith("CORPUS "):
        _, driver, algorithm, variant, kind, pages, orig, compr, same, huge, verdict = line.split()
        corpus[(algorithm, variant)][driver][kind] = (int(pages), int(orig), int(compr), int(same),
                                                      int(huge), verdict)
    elif line.startswith("CORPUS_MEMORY "):
        _, driver, algorithm, variant, used = line.split()
        corpus_memory[(algorithm, variant)][driver] = int(used)
    elif line.startswith("UNITS "):
        _, driver, algorithm, unit, kind, pages, compr, verdict = line.split()
        units[(algorithm, driver, int(unit))][kind] = (int(pages), int(compr), verdict)
    elif line.startswith("UNITS_SWAP "):
        fields = line.split()[1:]
        driver, algorithm, mthp, kind, pages, swapped, compr, objects, unzipped, reads = fields[:10]
        # (runs before unit_stat counted partial reads and reads straight into a folio's pages
        # printed neither, or only the first)
        partial = fields[10] if len(fields) >= 12 else "0"
        straight = fields[11] if len(fields) >= 13 else "0"
        verdict = fields[-1]
        units_swap[(int(mthp), algorithm, driver)][kind] = (
            int(pages), int(swapped), int(compr), int(objects), int(unzipped), int(reads), verdict,
            int(partial), int(straight))
    elif line.startswith("UNITS_MEMORY "):
        _, driver, algorithm, unit, used = line.split()
        units_memory[(algorithm, driver, int(unit))] = int(used)
    elif line.startswith("CORPUS_REFUSED "):
        corpus_refused.append(line.split()[1:])
    elif line.startswith("TABLE "):
        _, driver, size, pages = line.split()
        table[driver] = int(size) / int(pages)
    elif line.startswith("PROFILE "):
        _, cell, driver, percent, symbol = line.split()[:5]
        profiles[cell][driver].append((percent, symbol))
    elif line.startswith("LATENCY "):
        _, cell, driver, rep, *values = line.split()
        if len(values) in (6, 7):
            latency[cell][driver][int(rep)] = tuple(float(v) for v in values[:6])
        if len(values) == 7 and values[6] != "-":
            latency_waited[cell][int(rep)] = int(values[6])
    elif line.startswith("STATS "):
        _, cell, driver, rep, *values = line.split()
        if len(values) == 6 and "-" not in values:
            stats_reads[cell][driver][int(rep)] = tuple(float(v) for v in values)
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

def write_csv(name, table, fields=None):
    """Writes the rows of `table` (dicts) to out/name, with `fields` or the first row's keys."""
    with open(out / name, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=fields or list(table[0]))
        writer.writeheader()
        for row in table:
            writer.writerow(row)


write_csv("results.csv", rows, ["cell", "unit", "c_median", "rs_median", "ratio_median", "ratio_min",
                                 "ratio_max", "reps", "sys_s_per_gib_c", "sys_s_per_gib_rs", "latency_ratio"])

# The corpus cell: orig_data_size / compr_data_size per kind and over the three kinds (as the
# dictionary patches' cover letter measured, from mm_stat), and orig_data_size /
# mem_used_total (what the pool really holds) over the three; next to the cover letter's.
PUBLISHED = {("zstd", "none"): 3.47, ("zstd", "dict"): 3.76, ("zstd", "dict,level=8"): 4.06,
             ("lz4", "none"): 2.64, ("lz4", "dict"): 2.82, ("lz4hc", "none"): 2.87, ("lz4hc", "dict"): 3.47}
KINDS = ["programs", "text", "anon"]
corpus_rows = []
for (algorithm, variant), drivers in corpus.items():
    row = {"algorithm": algorithm, "variant": variant, "published": PUBLISHED.get((algorithm, variant))}
    for driver, tag in (("zram", "c"), ("zram_rs", "rs")):
        kinds = drivers.get(driver, {})
        orig = sum(kinds[k][1] for k in KINDS if k in kinds)
        compr = sum(kinds[k][2] for k in KINDS if k in kinds)
        for kind in KINDS:
            if kind in kinds:
                row[f"{kind}_{tag}"] = kinds[kind][1] / kinds[kind][2] if kinds[kind][2] else float("inf")
                row[f"{kind}_pages"] = kinds[kind][0]
        row[f"all_{tag}"] = orig / compr if compr else float("inf")
        used = corpus_memory[(algorithm, variant)].get(driver)
        row[f"memory_{tag}"] = orig / used if used else None
        row[f"compr_{tag}"] = compr
        row[f"intact_{tag}"] = all(kinds[k][5] == "intact" for k in kinds) and len(kinds) == len(KINDS)
    row["sizes_equal"] = all(drivers.get("zram", {}).get(k, (None,) * 5)[:5] ==
                             drivers.get("zram_rs", {}).get(k, (0,) * 5)[:5] for k in KINDS)
    corpus_rows.append(row)
if corpus_rows:
    fields = ["algorithm", "variant", "published", "sizes_equal"] + \
        [f"{k}_{t}" for k in KINDS + ["all", "memory", "compr", "intact"] for t in ("c", "rs")] + \
        [f"{k}_pages" for k in KINDS]
    write_csv("corpus.csv", corpus_rows, fields)

# The units cell: compr_data_size per kind and over the three, and mem_used_total, for each
# algorithm, driver and unit, each beside C zram's (one-page units) of the same algorithm.
units_rows = []
for (algorithm, driver, unit), kinds in sorted(units.items()):
    c = next((v for (a, d, _), v in units.items() if a == algorithm and d == "zram"), {})
    row = {"algorithm": algorithm, "driver": driver, "unit": unit}
    for kind in KINDS + ["all"]:
        mine = sum(kinds[k][1] for k in KINDS if k in kinds) if kind == "all" else kinds.get(kind, (0, 0))[1]
        theirs = sum(c[k][1] for k in KINDS if k in c) if kind == "all" else c.get(kind, (0, 0))[1]
        row[f"{kind}_compr"] = mine
        row[f"{kind}_vs_c"] = mine / theirs - 1 if theirs else None
    used = units_memory.get((algorithm, driver, unit))
    c_used = next((v for (a, d, _), v in units_memory.items() if a == algorithm and d == "zram"), None)
    row["memory"] = used
    row["memory_vs_c"] = used / c_used - 1 if used and c_used else None
    row["intact"] = len(kinds) == len(KINDS) and all(kinds[k][2] == "intact" for k in kinds)
    units_rows.append(row)
if units_rows:
    write_csv("units.csv", units_rows)

# The units-swap cell: per multi-size THP size and algorithm, for each kind and over the three,
# the KiB swapped out, compr_data_size while swapped out (zram_rs beside C zram), unit objects,
# and the unit decompressions, units' page reads, partial reads and units decompressed straight
# into a folio's pages of the read-back.
units_swap_rows = []
for (mthp, algorithm, driver), kinds in sorted(units_swap.items()):
    c = units_swap.get((mthp, algorithm, "zram"), {})
    row = {"mthp": mthp, "algorithm": algorithm, "driver": driver}
    for kind in KINDS + ["all"]:
        mine = [kinds[k] for k in (KINDS if kind == "all" else [kind]) if k in kinds]
        theirs = [c[k] for k in (KINDS if kind == "all" else [kind]) if k in c]
        compr, c_compr = sum(v[2] for v in mine), sum(v[2] for v in theirs)
        row[f"{kind}_swapped_kb"] = sum(v[1] for v in mine)
        row[f"{kind}_compr"] = compr
        row[f"{kind}_vs_c"] = compr / c_compr - 1 if c_compr and driver != "zram" else None
    row["objects"] = sum(v[3] for v in kinds.values())
    row["decompressions"] = sum(v[4] for v in kinds.values())
    row["page_reads"] = sum(v[5] for v in kinds.values())
    row["partial_reads"] = sum(v[7] for v in kinds.values())
    row["straight"] = sum(v[8] for v in kinds.values())
    row["intact"] = len(kinds) == len(KINDS) and all(v[6] == "intact" for v in kinds.values())
    units_swap_rows.append(row)
if units_swap_rows:
    write_csv("units-swap.csv", units_swap_rows)


def paired_medians(per_cell, names):
    """Rows of cells both drivers ran: per driver the median over their common repetitions of
    each figure, `names` naming the figures of a repetition's tuple in order."""
    rows = []
    for cell, drivers in per_cell.items():
        c, rs = drivers.get("zram", {}), drivers.get("zram_rs", {})
        reps = sorted(set(c) & set(rs))
        if not reps:
            continue
        row = {"cell": cell, "reps": len(reps)}
        for i, name in enumerate(names):
            row[f"{name}_c"] = statistics.median(c[r][i] for r in reps)
            row[f"{name}_rs"] = statistics.median(rs[r][i] for r in reps)
        rows.append(row)
    return rows


# The latency cells: per driver the median over repetitions of each percentile and of the
# writers' throughput; C / zram_rs per percentile (above 1: zram_rs's reads wait less) and
# zram_rs / C for the writers (above 1: zram_rs's writers are faster).
PERCENTILES = ["p50", "p99", "p99.9", "p99.99"]
latency_rows = paired_medians(latency, ["reads"] + PERCENTILES + ["writers_kib_s"])
for row in latency_rows:
    row["waited_rs"] = max(latency_waited[row["cell"]].values(), default=None)
if latency_rows:
    write_csv("latency.csv", latency_rows)

# The statistics cells: per driver the median over repetitions of each figure.
STAT_FIGURES = ["reads", "p50", "p99", "p99.9", "max", "walks"]
stats_rows = paired_medians(stats_reads, STAT_FIGURES)
if stats_rows:
    write_csv("stats.csv", stats_rows)

counts = {}
if (out / "callgrind.txt").exists():
    raw = dict(line.split() for line in (out / "callgrind.txt").read_text().splitlines() if line.strip())
    base = int(raw.get("none", 0))
    counts = {case: (int(total) - base) / 1000 for case, total in raw.items() if case != "none"}
json.dump({"header": header, "timing": timing, "rows": rows, "stosq_gb_s": stosq, "instructions_per_page": counts,
           "corpus": corpus_rows, "corpus_refused": corpus_refused, "latency": latency_rows,
           "stats": stats_rows, "units": units_rows, "units_swap": units_swap_rows},
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

if latency_rows:
    unit = "k instructions" if clock == "icount" else "µs"
    scale = 1000.0
    print(f"reads beside compression: the readers' completion latency ({unit}, C / zram_rs; ratio above 1:\n"
          " zram_rs's reads wait less) and the writers' throughput (KiB/s, zram_rs / C)")
    print(f"{'cell':<24} " + " ".join(f"{p:>22}" for p in PERCENTILES) +
          f" {'writers rs/C':>13} {'reads, C/rs':>15} {'waited':>7}")
    for row in latency_rows:
        cells = []
        for p in PERCENTILES:
            c, rs = row[f"{p}_c"] / scale, row[f"{p}_rs"] / scale
            cells.append(f"{c:.1f}/{rs:.1f} {c / rs if rs else 0:.2f}")
        writers = row["writers_kib_s_rs"] / row["writers_kib_s_c"] if row["writers_kib_s_c"] else 0
        print(f"{row['cell']:<24} " + " ".join(f"{x:>22}" for x in cells) +
              f" {writers:>13.3f} {row['reads_c']:>7.0f}/{row['reads_rs']:<7.0f}"
              f" {'-' if row['waited_rs'] is None else row['waited_rs']:>7}")
    print(" (waited: zram_rs's read_stat after the run, its reads that found every decompression\n"
          "  context lent out; the most over the repetitions)")

if stats_rows:
    unit = "k instructions" if clock == "icount" else "µs"
    print(f"statistics readers beside walks: mm_stat read whole, latency ({unit}, C / zram_rs; ratio\n"
          " above 1: zram_rs's reads take less), reads and walks completed (C / zram_rs)")
    print(f"{'cell':<18} " + " ".join(f"{p:>20}" for p in STAT_FIGURES[1:5]) + f" {'reads':>15} {'walks':>11}")
    for row in stats_rows:
        cells = []
        for p in STAT_FIGURES[1:5]:
            c, rs = row[f"{p}_c"] / 1000.0, row[f"{p}_rs"] / 1000.0
            cells.append(f"{c:.1f}/{rs:.1f} {c / rs if rs else 0:.2f}")
        print(f"{row['cell']:<18} " + " ".join(f"{x:>20}" for x in cells) +
              f" {row['reads_c']:>7.0f}/{row['reads_rs']:<7.0f} {row['walks_c']:>5.0f}/{row['walks_rs']:<5.0f}")

if corpus_rows:
    pages = corpus_rows[0]
    print("compression ratios on the corpus (orig_data_size / compr_data_size from mm_stat; memory:\n"
          " orig_data_size / mem_used_total; C / zram_rs; pages per kind: " +
          ", ".join(f"{k} {pages.get(k + '_pages', 0)}" for k in KINDS) + ")")
    print(f"{'algorithm':<10} {'variant':<13} " + " ".join(f"{k:>13}" for k in KINDS + ["all", "memory"]) +
          f" {'equal':>6} {'intact':>7} {'published':>9}")
    cell = lambda row, key: (f"{row.get(key + '_c') or 0:.2f}/{row.get(key + '_rs') or 0:.2f}")
    for row in corpus_rows:
        published = f"{row['published']:.2f}" if row["published"] else ""
        intact = "yes" if row["intact_c"] and row["intact_rs"] else "NO"
        print(f"{row['algorithm']:<10} {row['variant']:<13} " +
              " ".join(f"{cell(row, k):>13}" for k in KINDS + ["all", "memory"]) +
              f" {'yes' if row['sizes_equal'] else 'NO':>6} {intact:>7} {published:>9}")
    for refused in corpus_refused:
        print(f"  refused by {refused[0]}: {refused[1]} {refused[2]}")
    print("(published: the 6.12 dictionary patches' cover letter, one 1.75 GB data set of its own)")

def pct(v):
    """A relative difference as a signed percentage, "-" for none."""
    return f"{100 * v:+.1f}%" if v is not None else "-"


if units_rows:
    print("compression units on the corpus in runs of 64 KiB (compr_data_size from mm_stat, bytes, and\n"
          " against C zram's one-page units of the same algorithm; memory: mem_used_total)")
    print(f"{'algorithm':<10} {'driver':<8} {'unit':>6} " +
          " ".join(f"{k:>18}" for k in KINDS + ["all"]) + f" {'memory':>18} {'intact':>7}")
    for row in units_rows:
        print(f"{row['algorithm']:<10} {row['driver']:<8} {row['unit']:>6} " +
              " ".join(f"{row[k + '_compr']:>10} {pct(row[k + '_vs_c']):>7}" for k in KINDS + ["all"]) +
              f" {row['memory'] or 0:>10} {pct(row['memory_vs_c']):>7} {'yes' if row['intact'] else 'NO':>7}")

if units_swap_rows:
    print("swap of multi-size THP folios (mthp) to C zram and to zram_rs units of the folio's size: KiB\n"
          " swapped out and compr_data_size while swapped out (against C zram), unit objects, and the\n"
          " read-back's unit decompressions, units' page reads, partial reads (pages read by a\n"
          " request that covered part of their unit) and units decompressed straight into a folio")
    print(f"{'mthp':>6} {'algorithm':<10} {'driver':<8} " +
          " ".join(f"{k:>24}" for k in KINDS + ["all"]) +
          f" {'objects':>8} {'unzipped':>9} {'reads':>8} {'partial':>8} {'straight':>8} {'intact':>7}")
    for row in units_swap_rows:
        print(f"{row['mthp']:>6} {row['algorithm']:<10} {row['driver']:<8} " +
              " ".join(f"{row[k + '_swapped_kb']:>6} {row[k + '_compr']:>10} {pct(row[k + '_vs_c']):>6}"
                       for k in KINDS + ["all"]) +
              f" {row['objects']:>8} {row['decompressions']:>9} {row['page_reads']:>8}"
              f" {row['partial_reads']:>8} {row['straight']:>8}"
              f" {'yes' if row['intact'] else 'NO':>7}")

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
except ImportError:
    plt = None
    print("matplotlib missing: no chart")
if plt and rows:
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
if plt and corpus_rows:
    fig, ax = plt.subplots(figsize=(12, 5))
    labels = [f"{r['algorithm']}" + ("" if r["variant"] == "none" else f"\n{r['variant']}") for r in corpus_rows]
    x = range(len(corpus_rows))
    ax.bar([i - 0.2 for i in x], [r["all_c"] for r in corpus_rows], width=0.4, label="C zram", color="#8c8c8c")
    ax.bar([i + 0.2 for i in x], [r["all_rs"] for r in corpus_rows], width=0.4, label="zram_rs", color="#4c72b0")
    published = [(i, r["published"]) for i, r in zip(x, corpus_rows) if r["published"]]
    if published:
        ax.scatter([i for i, _ in published], [v for _, v in published], marker="_", s=400, color="#c44e52",
                   label="the dictionary patches' cover letter (its own data)", zorder=3)
    ax.set_xticks(list(x))
    ax.set_xticklabels(labels, fontsize=8)
    ax.set_ylabel("orig_data_size / compr_data_size")
    ax.set_title("Compression ratio on the corpus (programs, documentation text, anonymous memory)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out / "corpus.png", dpi=110)
