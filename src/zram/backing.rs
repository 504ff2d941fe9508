// SPDX-License-Identifier: GPL-2.0
//! The backing device of writeback (`backing_dev`): the device and the map of its blocks that
//! hold written-back pages, the reads of written-back pages (chained to a bio, or waited for;
//! decompressed after the read where pages were written back compressed), and `bd_stat`.

use super::counters::Event;
use super::page_io::Chain;
use super::slot_access::lock_with_reader;
use super::writeback_settings::FOUR_K_PER_PAGE;
use super::{Storage, Zram};
use crate::abi::Abi;
use crate::blocks::{self, BlockMap};
use crate::kapi::bdev::{self, BackingDev};
use crate::kapi::bounce::BouncePage;
use crate::kapi::mem;
use crate::table::PAGE_SIZE;
use crate::Kernel;
use core::sync::atomic::AtomicUsize;
use kernel::alloc::flags::GFP_KERNEL;
use kernel::alloc::{KVec, VVec};
use kernel::prelude::*;
use kernel::sync::Arc;

impl Zram {
    /// `backing_dev`: calls `f` with the path of the backing device, `None` when unset.
    pub(crate) fn with_backing_dev<R>(&self, f: impl FnOnce(Option<&[u8]>) -> R) -> Result<R> {
        let config = self.init_lock.read();
        let Some(backing) = &config.backing else {
            return Ok(f(None));
        };
        // C's room: a sysfs page less the newline.
        let mut buf = KVec::from_elem(0u8, PAGE_SIZE - 1, GFP_KERNEL)?;
        let path = backing.dev.path(&mut buf)?;
        Ok(f(Some(path)))
    }

    /// Sets the backing device (the path in `input`, up to a NUL or `PATH_MAX - 1` bytes, one
    /// trailing newline dropped), replacing and closing the previous one; `EBUSY` once
    /// initialised, else the errors of [`BackingDev::open`].
    pub(crate) fn set_backing_dev(&self, input: &[u8]) -> Result {
        let mut config = self.init_lock.write();
        if config.disksize != 0 {
            pr_info!("Can't setup backing device for initialized device\n");
            return Err(EBUSY);
        }
        let name = crate::parse::c_str(input);
        let name = &name[..name.len().min(PATH_MAX - 1)];
        let name = name.strip_suffix(b"\n").unwrap_or(name);
        let backing = Backing::new(BackingDev::open(name)?)?;
        config.backing = Some(Arc::new(backing, GFP_KERNEL)?);
        pr_info!(
            "setup backing device {}\n",
            kernel::str::BStr::from_bytes(name)
        );
        Ok(())
    }

    /// `bd_stat`: blocks of the backing device in use, pages read from it and written to it,
    /// each in 4 KiB units.
    pub(crate) fn bd_stat(&self) -> (u64, u64, u64) {
        let _config = self.init_lock.read();
        let count = self.storage().map_or(0, |storage| {
            storage
                .backing
                .as_ref()
                .map_or(0, |backing| backing.blocks.used() as u64)
        });
        let (reads, writes) = self.stats.backing_pages();
        let four_k = |pages: u64| pages.saturating_mul(FOUR_K_PER_PAGE);
        (four_k(count), four_k(reads), four_k(writes))
    }

    /// Reads bytes `offset..offset + out.len()` of page `index`, written back to `block`: with
    /// a `dest` (`out` is then a whole page of a bio being read), by a read of the backing
    /// device chained to that bio, which completes when both have (for a page written back
    /// compressed, once a worker has decompressed it); else waiting for the device, from any
    /// context that may sleep (the I/O path included). Cold: a page comes back from the device
    /// far more rarely than it is read from memory.
    #[cold]
    pub(super) fn read_written_back(
        &self,
        storage: &Storage,
        index: usize,
        block: usize,
        offset: usize,
        out: &mut [u8],
        dest: Option<Chain<'_>>,
    ) -> Result {
        let backing = storage.backing.as_ref().ok_or(EIO)?;
        self.stats.count(Event::BdRead);
        match (dest, storage.compressed_writeback) {
            (Some(chain), false) => backing.dev.read_page_chained(block, chain.dest),
            (None, false) => bdev::read_page_waiting(&backing.dev, block, offset, out),
            (Some(chain), true) => {
                let owner: Arc<Storage> = chain.storage.into();
                let decompress = move |page: &mut [u8]| decompress_back(&owner, index, block, page);
                backing.dev.read_page_then(block, chain.dest, decompress)
            }
            (None, true) => {
                let end = offset
                    .checked_add(out.len())
                    .filter(|&end| end <= PAGE_SIZE)
                    .ok_or(EINVAL)?;
                let mut page = BouncePage::new()?;
                bdev::read_block_waiting(&backing.dev, block, &mut page)?;
                let bytes = page.bytes_mut();
                decompress_back(storage, index, block, bytes)?;
                out.copy_from_slice(bytes.get(offset..end).ok_or(EIO)?);
                Ok(())
            }
        }
    }
}

/// Longest path `backing_dev` takes, with its NUL (C's `PATH_MAX`).
const PATH_MAX: usize = 4096;

/// The words of a block map.
pub(super) struct Words(VVec<AtomicUsize>);

impl AsRef<[AtomicUsize]> for Words {
    fn as_ref(&self) -> &[AtomicUsize] {
        &self.0
    }
}

/// A backing device and the map of its blocks that hold written-back pages.
pub(super) struct Backing {
    pub(super) dev: BackingDev,
    pub(super) blocks: BlockMap<Words>,
}

impl Backing {
    fn new(dev: BackingDev) -> Result<Self> {
        let count = dev.pages();
        let words = Words(mem::zeroed_words(blocks::words_for(count))?);
        let blocks = BlockMap::new(words, count, Kernel::BLOCK_ZERO_UNUSED).map_err(|_| EINVAL)?;
        Ok(Self { dev, blocks })
    }

    /// Gives `block` back once no slot names it.
    pub(super) fn release(&self, block: usize) {
        // A block not in use would be a bug; C warns once. Nothing to undo here.
        let _ = self.blocks.release(block);
    }
}

/// Decompresses in place `page`, read from `block` where page `index` was written back
/// compressed, if the slot still names the block: with the slot's size (a huge page is whole
/// already), as C 7.3's `decompress_bdev_page()`. A slot that changed meanwhile is `EIO`, with
/// the page zeroed, as in C.
fn decompress_back(storage: &Storage, index: usize, block: usize, page: &mut [u8]) -> Result {
    // With a decompression context of the algorithm that compressed the object.
    let found = lock_with_reader(storage, index, |slot, _| {
        slot.written_back_object()
            .filter(|object| object.block == block)
    });
    let Some((mut reader, Some(object))) = found else {
        page.fill(0);
        return Err(EIO);
    };
    if object.huge {
        return Ok(());
    }
    let size = object.size;
    let (scratch, decompressor) = reader.scratch_and_decompressor();
    let whole = scratch.get_mut(..PAGE_SIZE).ok_or(EIO)?;
    let result = decompressor.decompress_into(whole, page.get(..size).ok_or(EIO)?);
    if result.is_ok() {
        mem::copy_page_bytes(page, whole);
    } else {
        pr_err!("Decompression failed! page={}\n", index);
    }
    result
}
