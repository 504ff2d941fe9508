#!/usr/bin/env python3
"""usage: corpus.py STAGE ROOT PAGE OUT [RUN]

Builds the bench's compression-ratio corpus (the `corpus` cell of scripts/guest/bench.sh) into
OUT, from data nobody chose for how it compresses:

  programs.img  the guest's own programs and libraries: every ELF file packed into the VM's
                root (STAGE), kernel modules left out, in path order
  text.img      text from Debian's documentation tree (/usr/share/doc on this machine, gzip'ed
                files unpacked, binary files left out): the files at even positions in path order
  anon.img      the resident anonymous memory (heap, arenas, anonymous mappings, stack) of a
                running Python process that has read Debian's package database into objects
                and imported a set of standard modules
  dict          a 64 KiB zstd dictionary (`zstd --train`, samples of one page) trained on other
                data of the same three kinds: ELF files of ROOT's /usr/bin and /usr/sbin that
                the guest does not carry, the documentation files at odd positions, and the
                anonymous memory of another Python process (a walk of /usr/share and other
                modules); so no measured page is in the training set
  manifest.txt  sizes and SHA-256 of each file

zram compresses each page on its own, so a kind larger than MAX_PAGES pages is represented by
every k-th page of it (k the smallest that fits): an even sample of the whole. With RUN (bytes,
a multiple of PAGE) the sample is every k-th run of RUN bytes instead, so that the pages of one
compression unit of up to RUN bytes are neighbours in the data, as in memory. PAGE is the
guest's page size. ROOT is the root the guest's user space comes from (/ on x86_64).
"""

import gzip
import hashlib
import os
import subprocess
import sys
from pathlib import Path

MAX_PAGES_BYTES = 16 << 20
DICT_BYTES = 64 << 10


def is_elf(path):
    try:
        with open(path, "rb") as f:
            return f.read(4) == b"\x7fELF"
    except OSError:
        return False


def concat(paths):
    """The files' contents, one after another (a page may hold the end of one and the start of
    the next)."""
    out = bytearray()
    for path in paths:
        try:
            out += Path(path).read_bytes()
        except OSError:
            continue
    return bytes(out)


def sample(data, page, run, max_bytes=MAX_PAGES_BYTES):
    """Every k-th run of RUN bytes of DATA (the last one zero-padded), at most max_bytes in all;
    and where it came from, for the manifest."""
    runs = (len(data) + run - 1) // run
    limit = max_bytes // run
    step = max(1, (runs + limit - 1) // limit)
    out = bytearray()
    for i in range(0, runs, step):
        chunk = data[i * run:(i + 1) * run]
        out += chunk + bytes(run - len(chunk))
    unit = "page" if run == page else f"run of {run} bytes"
    what = "every page" if step == 1 else f"1 {unit} in {step}"
    return bytes(out), what + f" of {len(data)} bytes"


def files_under(top, predicate=lambda p: True):
    found = []
    for dirpath, dirnames, filenames in os.walk(top):
        dirnames.sort()
        for name in sorted(filenames):
            path = os.path.join(dirpath, name)
            if os.path.isfile(path) and not os.path.islink(path) and predicate(path):
                found.append(path)
    return found


def programs(stage):
    def wanted(path):
        rel = os.path.relpath(path, stage)
        return not rel.startswith("lib/modules/") and not rel.startswith("corpus/") and is_elf(path)
    return files_under(stage, wanted)


def training_programs(carried_paths, root):
    """ELF files of ROOT's /usr/bin and /usr/sbin whose names are not among CARRIED_PATHS."""
    carried = {os.path.basename(p) for p in carried_paths}
    found = []
    for top in ("usr/bin", "usr/sbin"):
        found += [p for p in files_under(os.path.join(root, top))
                  if os.path.basename(p) not in carried and is_elf(p)]
    return found


def documentation():
    """Every text file of /usr/share/doc (gzip'ed ones unpacked), in path order."""
    texts = []
    for path in files_under("/usr/share/doc"):
        try:
            data = Path(path).read_bytes()
            if path.endswith(".gz"):
                data = gzip.decompress(data)
        except (OSError, EOFError, gzip.BadGzipFile):
            continue
        if data and b"\0" not in data:
            texts.append(data)
    return texts


# The two processes whose memory is imaged: a workload the measured image comes from and an
# unrelated one for the dictionary. Each ends by saying "ready" and waiting on its stdin.
WORKLOADS = {
    "measured": r"""
import argparse, asyncio, decimal, email.parser, http.client, json, sqlite3, xml.etree.ElementTree
packages, current = [], {}
with open("/var/lib/dpkg/status", encoding="utf-8", errors="replace") as f:
    for line in f:
        if line == "\n":
            if current: packages.append(current)
            current = {}
        elif line[0] in " \t" and current:
            current[key] += line
        elif ":" in line:
            key, _, value = line.partition(":")
            current[key] = value.strip()
by_name = {p.get("Package"): p for p in packages}
reverse = {}
for p in packages:
    for dep in p.get("Depends", "").split(","):
        name = dep.strip().split(" ")[0]
        if name: reverse.setdefault(name, []).append(p.get("Package"))
encoded = json.dumps(packages)
""",
    "training": r"""
import csv, html.parser, logging, tarfile, unittest, urllib.request, zipfile
tree = {}
for top in ("/usr/share", "/usr/lib"):
    for dirpath, dirnames, filenames in __import__("os").walk(top):
        for name in filenames:
            try: st = __import__("os").lstat(dirpath + "/" + name)
            except OSError: continue
            tree[dirpath + "/" + name] = (st.st_size, st.st_mtime, st.st_mode)
by_size = sorted(tree.items(), key=lambda kv: kv[1][0])
""",
}
WORKLOAD_END = "\nimport sys\nprint('ready', flush=True)\nsys.stdin.read()\n"


def anonymous_memory(workload):
    """The resident pages of the child's private writable mappings that no file backs."""
    env = dict(os.environ, PYTHONHASHSEED="0")
    # Without address-space randomisation the image (its pointers) differs less between runs.
    cmd = ["setarch", os.uname().machine, "-R", sys.executable, "-c", WORKLOADS[workload] + WORKLOAD_END]
    child = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
    try:
        if child.stdout.readline().strip() != b"ready":
            raise SystemExit(f"corpus: the {workload} process did not start")
        page = os.sysconf("SC_PAGE_SIZE")
        out = bytearray()
        with open(f"/proc/{child.pid}/maps") as maps, \
                open(f"/proc/{child.pid}/pagemap", "rb") as pagemap, \
                open(f"/proc/{child.pid}/mem", "rb") as mem:
            for line in maps:
                fields = line.split()
                start, end = (int(x, 16) for x in fields[0].split("-"))
                perms, name = fields[1], fields[5] if len(fields) > 5 else ""
                if not perms.startswith("rw") or perms[3] != "p":
                    continue
                if name and name not in ("[heap]", "[stack]") and not name.startswith("[anon:"):
                    continue
                for addr in range(start, end, page):
                    pagemap.seek(addr // page * 8)
                    entry = int.from_bytes(pagemap.read(8), "little")
                    if not entry >> 63 & 1:  # not present
                        continue
                    mem.seek(addr)
                    out += mem.read(page)
        return bytes(out)
    finally:
        child.stdin.close()
        child.wait()


def main():
    stage, root, page, out = sys.argv[1], sys.argv[2], int(sys.argv[3]), Path(sys.argv[4])
    run = int(sys.argv[5]) if len(sys.argv) > 5 else page
    if run < page or run % page:
        raise SystemExit("corpus: RUN must be a multiple of PAGE")
    out.mkdir(parents=True, exist_ok=True)
    train = out / "train"
    train.mkdir(exist_ok=True)
    texts = documentation()
    measured_programs = programs(stage)
    training_files = training_programs(measured_programs, root)
    sources = {
        "programs.img": (concat(measured_programs), f"{len(measured_programs)} ELF files"),
        "text.img": (b"".join(texts[0::2]), f"{len(texts[0::2])} text files"),
        "anon.img": (anonymous_memory("measured"), "resident anonymous memory"),
        "train/programs": (concat(training_files), f"{len(training_files)} ELF files"),
        "train/text": (b"".join(texts[1::2]), f"{len(texts[1::2])} text files"),
        "train/anon": (anonymous_memory("training"), "resident anonymous memory"),
    }
    origins = {"dict": f"zstd --train of the train/ files in samples of {page} bytes"}
    for name, (data, what) in sources.items():
        image, how = sample(data, page, run)
        (out / name).write_bytes(image)
        origins[name] = f"{how}: {what}"
    subprocess.run(["zstd", "-q", "-f", "--train", f"-B{page}", f"--maxdict={DICT_BYTES}",
                    *[str(out / n) for n in sources if n.startswith("train/")],
                    "-o", str(out / "dict")], check=True)
    with open(out / "manifest.txt", "w") as manifest:
        for name in [*[n for n in sources if not n.startswith("train/")], "dict",
                     *[n for n in sources if n.startswith("train/")]]:
            data = (out / name).read_bytes()
            manifest.write(f"{name} {len(data)} {hashlib.sha256(data).hexdigest()} ({origins[name]})\n")
    for name in sources:
        if name.startswith("train/"):
            (out / name).unlink()
    train.rmdir()


if __name__ == "__main__":
    main()
