// SPDX-License-Identifier: GPL-2.0
//! The kernel-independent modules of zram_rs, compiled for the host from the very files the
//! module is built from, so that `cargo test` checks the code that runs in the kernel.
#![no_std]

#[path = "../../src/comp/algorithm.rs"]
pub mod algorithm;
#[path = "../../src/blocks.rs"]
pub mod blocks;
#[path = "../../src/fill.rs"]
pub mod fill;
#[path = "../../src/idle.rs"]
pub mod idle;
#[path = "../../src/parse.rs"]
pub mod parse;
#[path = "../../src/recompress_args.rs"]
pub mod recompress_args;
#[path = "../../src/same.rs"]
pub mod same;
#[path = "../../src/slot.rs"]
pub mod slot;
#[path = "../../src/stat_format.rs"]
pub mod stat_format;
#[path = "../../src/tokens.rs"]
pub mod tokens;
#[path = "../../src/unit.rs"]
pub mod unit;
#[path = "../../src/words.rs"]
pub mod words;
#[path = "../../src/writeback_args.rs"]
pub mod writeback_args;
