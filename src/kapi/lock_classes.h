/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The lock classes of shim.c's lockdep maps, by number: zram_rs_lock_map_new()'s argument.
 * c_layout.c hands them to the Rust side, which checks its own numbers against them.
 */
#ifndef ZRAM_RS_LOCK_CLASSES_H
#define ZRAM_RS_LOCK_CLASSES_H

#define ZRAM_RS_LOCK_SLOT 0
#define ZRAM_RS_LOCK_STREAM 1
#define ZRAM_RS_LOCK_READER 2

#endif
