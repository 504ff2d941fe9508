// SPDX-License-Identifier: GPL-2.0
//! C zram's user ABI of Linux 7.3 (and, with a build warning, of later kernels, whose C zram
//! has not been compared).

use super::{Abi, Linux, ParamsRule, Selection, Turns};
use crate::comp::algorithm::{self, NameError, Named};
use crate::idle::{self, Cutoff};
use crate::kapi::mem::{self, PoolGfp};
use crate::kapi::time;
use crate::parse::{self, ParseError};
use crate::recompress_args::{self, Recompress};
use kernel::prelude::*;

impl Abi for Linux<7, 3> {
    const COMPRESSED_WRITEBACK: bool = true;
    const SHOWS_WRITESTALL: bool = false;

    /// Saturates on overflow; wants a number before a suffix.
    fn memparse(input: &[u8]) -> (u64, usize) {
        parse::memparse_7_3(input)
    }

    /// deflate's window.
    const BACKEND_KEYS: &'static [&'static str] = &["deflate.winbits"];

    /// The name as written to `sysfs_streq()`.
    fn algorithm_name<A: Named>(input: &[u8]) -> Result<A, NameError> {
        algorithm::parse_name_7_3(input)
    }

    /// `priority` a `kstrtoint`; an unknown `type` is `EINVAL` while no earlier one was known.
    fn recompress_request(input: &[u8]) -> Result<Recompress<'_>, ParseError> {
        recompress_args::recompress(input, true)
    }

    /// A `u32` age in seconds; an age at or beyond the uptime does nothing.
    fn idle_cutoff(input: &[u8]) -> Result<Option<Cutoff>> {
        let uptime = time::boottime_seconds();
        let idle = idle::idle_7_3(input, uptime)?;
        Ok(idle.map(|idle| Cutoff::of_7_3(idle, uptime)))
    }

    const WRAPPED_DISKSIZE_EINVAL: bool = true;
    const GFP_WRITE_RECLAIM: PoolGfp = mem::GFP_POOL_OBJECT_QUIET;
    const GFP_RECOMPRESS: PoolGfp = mem::GFP_POOL_OBJECT_QUIET;
    const ALGORITHM_CHANGE_FORGETS_PARAMS: bool = true;
    const PARAMS: ParamsRule = ParamsRule::BeforeInit;
    const PARAMS_CHECKED_AT_INIT: bool = true;
    const LZ4_DICT_LOADED_AT_INIT: bool = true;
    const DICT_READ_ERRNO: bool = true;

    const TURNS: Turns = Turns::Queue;
    const SELECTION: Selection = Selection::MarkedLargestFirst;
    const BLOCK_ZERO_UNUSED: bool = false;
    const WRITEBACK_LIMIT_WHOLE_PAGES: bool = true;
    const BUDGET_WAITS_FOR_WRITEBACK: bool = true;
    const WRITEBACK_ONE_AT_A_TIME: bool = false;
    const FAILED_WRITEBACK_UNMARKS_IDLE: bool = false;
    const WRITTEN_BACK_KEEPS_OBJECT: bool = true;

    const HUGE_FLAG: u32 = 4;
}
