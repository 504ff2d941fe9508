// SPDX-License-Identifier: GPL-2.0
//! debugfs `block_state` of a device, as C zram prints it: one line per allocated slot (its
//! index, last access and marks), the file position counting slots; `EINVAL` before
//! initialisation.

use super::Zram;
use crate::kapi::cpu;
use crate::kapi::debugfs::Records;
use crate::slot::{Priority, SlotContent};
use crate::stat_format::BlockState;
use kernel::prelude::*;

impl Records for Zram {
    fn read_records(&self, pos: &mut i64, out: &mut [u8]) -> Result<usize> {
        // As C, under the device's lock: no reset meanwhile.
        let _config = self.init_lock.read();
        let storage = self.storage().ok_or(EINVAL)?;
        let pages = storage.pages.pages();
        let Ok(start) = usize::try_from(*pos) else {
            return Ok(0);
        };
        let mut written = 0;
        for index in start..pages {
            let Some(slot) = storage.pages.lock(index) else {
                break;
            };
            let content = slot.content();
            if content != SlotContent::Empty {
                let state = BlockState {
                    index,
                    seconds: u64::from(slot.access_time()),
                    micros: 0,
                    same: matches!(content, SlotContent::Same(_)),
                    written_back: matches!(content, SlotContent::WrittenBack(_)),
                    huge: slot.huge_mark(),
                    idle: slot.is_idle(),
                    recompressed: slot.priority() != Priority::PRIMARY,
                    incompressible: slot.is_incompressible(),
                };
                let rest = out.get_mut(written..).unwrap_or_default();
                let Some(len) = state.write_into(rest) else {
                    break;
                };
                written += len;
            }
            drop(slot);
            *pos = pos.saturating_add(1);
            if index % 4096 == 4095 {
                cpu::cond_resched();
            }
        }
        Ok(written)
    }
}
