#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Tabulates a `BENCH_PROFILE=insn make bench` run: guest instructions per 4 KiB page moved,
for C zram and zram_rs, from the QEMU plugin's counts (tools/insn_count.c).

usage: insn_report.py RESULTS_DIR SYSTEM_MAP
RESULTS_DIR holds console.log (INSN and KSYM lines) and insn-counts.txt; writes insn.txt there
and prints the table.
"""
import bisect
import sys
from collections import Counter, defaultdict
from pathlib import Path

KERNEL_START = 0xFFFF800000000000
TOP_DIFFERENCES = 8

out = Path(sys.argv[1])
kernel_symbols = []
for line in open(sys.argv[2]):
    address, kind, name = line.split()[:3]
    if kind in "tTwW":
        kernel_symbols.append((int(address, 16), name))

# Each INSN line names the plugin phase of one run; the KSYM lines before it are the symbols
# of the module that ran it.
runs = {}  # phase -> (cell, driver, pages, module symbols)
module_symbols = []
for line in open(out / "console.log", errors="replace"):
    fields = line.split()
    if not fields:
        continue
    if fields[0] == "KSYM" and len(fields) >= 4 and fields[2] in "tT":
        module_symbols.append((int(fields[1], 16), fields[3]))
    elif fields[0] == "INSN" and len(fields) == 5:
        phase, cell, driver, pages = int(fields[1]), fields[2], fields[3], int(fields[4])
        runs[phase] = (cell, driver, pages, module_symbols)
        module_symbols = []

blocks = defaultdict(list)  # phase -> [(address, instructions, executions)]
phase = None
for line in open(out / "insn-counts.txt"):
    fields = line.split()
    if fields[0] == "PHASE":
        phase = int(fields[1])
    elif phase in runs:
        blocks[phase].append((int(fields[0], 16), int(fields[1]), int(fields[2])))


def per_symbol(phase):
    """Instructions per page by symbol ("user" for user space) and the module's own names."""
    _, _, pages, module = runs[phase]
    table = sorted(kernel_symbols + module)
    starts = [address for address, _ in table]
    counts = Counter()
    for address, instructions, executions in blocks[phase]:
        if address < KERNEL_START:
            name = "user"
        else:
            i = bisect.bisect_right(starts, address) - 1
            name = table[i][1] if i >= 0 else "?"
        counts[name] += instructions * executions / pages
    return counts, {name for _, name in module}


def driver_code(counts, module):
    return sum(v for k, v in counts.items() if k in module or k.startswith("rust_helper_"))


def short(name):
    """The identifiers of a Rust v0 mangled name after the crate's (`zram::Zram::write_page`),
    else the name as it is."""
    if not name.startswith("_R"):
        return name
    words, i = [], 2
    while i < len(name):
        c = name[i]
        if c.isdigit():
            j = i
            while name[j].isdigit():
                j += 1
            if name[j] == "_":  # separator before identifiers starting with a digit or _
                j += 1
            length = int(name[i:j].rstrip("_"))
            words.append(name[j:j + length])
            i = j + length
        elif c in "sB":  # disambiguator or back-reference: base-62 number ending in _
            i = name.index("_", i) + 1
        else:
            i += 1
    return "::".join(words[1:]) if len(words) > 1 else name


def ratio(c, rs):
    return f"{c / rs:6.3f}" if rs else f"{'-':>6}"


by_cell = defaultdict(dict)
for phase, (cell, driver, _, _) in runs.items():
    by_cell[cell][driver] = phase
# The units cell (units/<algorithm>/<kind>/<step>/u<bytes>): C zram has only one-page units, so
# each zram_rs unit size is set against C's run of the same step.
for cell, drivers in by_cell.items():
    if cell.startswith("units/") and "zram" not in drivers:
        prefix = cell.rsplit("/", 1)[0] + "/"
        for other, other_drivers in by_cell.items():
            if other.startswith(prefix) and "zram" in other_drivers:
                drivers["zram"] = other_drivers["zram"]

lines = []
header = (f"{'cell':34} {'driver code C':>13} {'zram_rs':>9} {'C/rs':>6}   "
          f"{'kernel C':>9} {'zram_rs':>9} {'C/rs':>6}   {'all C':>9} {'zram_rs':>9}")
lines.append("Guest instructions per 4 KiB page (QEMU plugin count; C/rs above 1: zram_rs fewer).")
lines.append("driver code: the module's own functions, plus the kernel's rust_helper_ functions")
lines.append("for zram_rs; kernel: all kernel code; all: kernel and user space (fio).")
clock_file = out / "clock.txt"
if clock_file.exists() and "icount" in clock_file.read_text():
    lines.append("Counted under the instruction clock: time-driven work is tied to instructions too,")
    lines.append("so kernel and all repeat to within about 0.4 %; a `rep` string instruction counts")
    lines.append("once per iteration.")
else:
    lines.append("Counted without the instruction clock: the driver code column is exact; kernel and")
    lines.append("all also hold work driven by time (timer ticks, the other vCPU), which varies with")
    lines.append("the host's speed; a `rep` string instruction counts once.")
lines.append("")
lines.append(header)
details = []
for cell, drivers in by_cell.items():
    if set(drivers) != {"zram", "zram_rs"}:
        continue
    c_counts, c_module = per_symbol(drivers["zram"])
    rs_counts, rs_module = per_symbol(drivers["zram_rs"])
    c_driver, rs_driver = driver_code(c_counts, c_module), driver_code(rs_counts, rs_module)
    c_kernel = sum(v for k, v in c_counts.items() if k != "user")
    rs_kernel = sum(v for k, v in rs_counts.items() if k != "user")
    c_all, rs_all = sum(c_counts.values()), sum(rs_counts.values())
    lines.append(f"{cell:34} {c_driver:13.1f} {rs_driver:9.1f} {ratio(c_driver, rs_driver)}   "
                 f"{c_kernel:9.1f} {rs_kernel:9.1f} {ratio(c_kernel, rs_kernel)}   "
                 f"{c_all:9.1f} {rs_all:9.1f}")
    differences = Counter()
    for name in set(c_counts) | set(rs_counts):
        if name != "user":
            differences[name] = rs_counts[name] - c_counts[name]
    details.append(f"{cell}: largest kernel differences, zram_rs - C, instructions per page")
    for name, difference in sorted(differences.items(), key=lambda kv: -abs(kv[1]))[:TOP_DIFFERENCES]:
        details.append(f"    {difference:+9.1f}  {short(name)[:90]}")

text = "\n".join(lines + [""] + details) + "\n"
(out / "insn.txt").write_text(text)
print("\n".join(lines))
print(f"per-symbol differences: {out / 'insn.txt'}")
