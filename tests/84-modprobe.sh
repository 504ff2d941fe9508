#!/bin/bash
# The package's modprobe configuration (modprobe/zram_rs-as-zram.conf, at the path the package
# installs it): with it linked into /etc/modprobe.d, kmod's `modprobe zram` loads zram_rs, with
# the options given on the command line or for zram in modprobe.d, and falls back to C zram.ko
# when the kernel has no zram_rs.ko; `modprobe -r zram` unloads either (and fails while zram_rs
# is in use); install.md's switch from a loaded zram.ko to zram_rs and back; without the link,
# `modprobe zram` loads C zram.ko again. And the module's modinfo.
. "$(dirname "$0")/lib.sh"
plan $((29 + UNLOAD_CASES))
conf=/usr/share/zram-rs-dkms/zram_rs-as-zram.conf
link=/etc/modprobe.d/zram_rs-as-zram.conf
ko=/lib/modules/$(uname -r)/extra/zram_rs.ko

zram_devices() {
	ls /sys/block | grep '^zram' | paste -sd' '
}

check "without the configuration, modprobe zram succeeds" modprobe zram
check_eq "and loads C zram.ko" zram "$(drivers_loaded)"

# install.md's switch: the link, then `modprobe -r zram` unloads C zram.ko, `modprobe zram`
# loads zram_rs.
ln -s "$conf" "$link"
check "with the configuration linked, modprobe -r zram succeeds with zram.ko loaded" modprobe -r zram
check_eq "and unloads zram.ko" none "$(drivers_loaded)"
check "modprobe zram succeeds" modprobe zram
check_eq "and loads zram_rs" zram_rs "$(drivers_loaded)"
check_eq "with zram's default of one device" zram0 "$(zram_devices)"
check "modprobe zram again succeeds (already loaded)" modprobe zram
check_eq "and leaves zram_rs alone" zram_rs "$(drivers_loaded)"
exec 3</dev/zram0
check "modprobe -r zram fails while a zram_rs device is open" bash -c '! modprobe -r zram 2>/dev/null'
check_eq "and leaves zram_rs loaded" zram_rs "$(drivers_loaded)"
exec 3<&-
check "modprobe -r zram succeeds" modprobe -r zram
check_eq "and unloads zram_rs" none "$(drivers_loaded)"
check "modprobe -r zram with nothing loaded succeeds" modprobe -r zram

check "modprobe zram num_devices=3" modprobe zram num_devices=3
check_eq "passes the option to zram_rs" "zram_rs: zram0 zram1 zram2" "$(drivers_loaded): $(zram_devices)"
modprobe -r zram
echo "options zram num_devices=2" >/etc/modprobe.d/zram-options.conf
modprobe zram
check_eq "options zram in modprobe.d apply to zram_rs" "zram_rs: zram0 zram1" "$(drivers_loaded): $(zram_devices)"
modprobe -r zram

# A kernel DKMS did not build zram_rs for: C zram.ko, with the same options.
mv "$ko" /tmp/zram_rs.ko && depmod
out=$(modprobe zram 2>&1)
check_eq "without zram_rs.ko, modprobe zram succeeds quietly" "0: " "$?: $out"
check_eq "and loads C zram.ko, with the options for zram" "zram: zram0 zram1" "$(drivers_loaded): $(zram_devices)"
check "modprobe -r zram succeeds" modprobe -r zram
check_eq "and unloads zram.ko" none "$(drivers_loaded)"
mv /tmp/zram_rs.ko "$ko" && depmod
rm -f /etc/modprobe.d/zram-options.conf

# And back: the link removed, zram_rs unloaded by its name, zram.ko loaded.
modprobe zram
rm "$link"
check "with the link removed, modprobe -r zram_rs succeeds" modprobe -r zram_rs
check "modprobe zram succeeds" modprobe zram
check_eq "and loads C zram.ko again" zram "$(drivers_loaded)"
rmmod zram

# modinfo of the module the guest carries (the package's DKMS build under make check).
check_eq "modinfo: license" GPL "$(modinfo -F license zram_rs)"
check "modinfo: a description naming zram" bash -c "modinfo -F description zram_rs | grep -q zram"
check "modinfo: an author" test -n "$(modinfo -F author zram_rs)"
check "modinfo: a version" bash -c "modinfo -F version zram_rs | grep -qE '^[0-9]+\.[0-9]+\.[0-9]+'"
check_eq "modinfo: num_devices described as in zram.ko" "$(modinfo -F parm zram)" "$(modinfo -F parm zram_rs)"

zram_load
zram_unload
finish
