// SPDX-License-Identifier: GPL-2.0
//! One zram device ([`Zram`]): what it owns — its settings (`Config`, under `init_lock`), the
//! algorithm choice, the initialised [`Storage`] (the [`PageStore`], the algorithms' streams and
//! decompression contexts, the backing device), the counters, the writeback settings and the
//! post-processing turn — and its life cycle: initialisation through `disksize`, and `reset`.
//! The work on it is in one child module per concern: the bio path (`io.rs`), one page's read
//! and write (`page_io.rs`), locked slot reads (`slot_access.rs`), counters (`counters.rs`),
//! attributes (`store_attrs.rs`, `algorithm_attrs.rs`), writeback (`writeback.rs`,
//! `writeback_settings.rs`, `backing.rs`), recompression (`recompress.rs`), what those two
//! share (`post_process.rs`), and debugfs `block_state` (`block_state.rs`). Safe Rust only; the
//! unsafe work is in the wrapper modules.
//!
//! # Locking
//!
//! Lock order: `init_lock` (a reader/writer semaphore, as C's: taken for writing by what
//! changes the device's settings or state — disksize, reset, algorithms, `backing_dev`,
//! `mem_limit` — and for reading by what only needs the device to stay as it is — the
//! statistics, `initstate`, `idle`, `compact`, `block_state`, writeback and recompression for
//! their whole run; reading `disksize` does not take it) → the backing device's `open_mutex`
//! (opened and closed by `backing_dev` and `reset` under `init_lock`) → the post-processing
//! turn (7.3, `post_process.rs`) → `choice` (the algorithms and parameters, a mutex; 6.12's
//! `algorithm_params` takes it alone, as C takes no lock) → `storage`
//! (a spinlock held only to clone or swap the `Arc` of the initialised state) → a compression
//! stream or a decompression context (each a sleeping wait in its pool, `comp/pool.rs`; under
//! a slot lock only `try_get`, which never waits; no thread holds two of them) → a slot lock
//! (`table.rs`) → zsmalloc's own locks.
//! The I/O path takes no device-wide lock: it gets the storage the disk published
//! ([`DiskRef::publish_io`]), may wait for a stream (a write) or a decompression context (a
//! read), and then only locks single slots. `reset` takes the storage back under a [`Claim`]
//! (no openers, so no I/O in flight). Attributes
//! reach the storage through the `storage` spinlock instead, which keeps its own reference.
//! This disk's own `open_mutex` (taken for claims) is never held together with `init_lock`.
//! A writeback or recompression holds `init_lock` for reading until it has let go of the
//! storage and the backing device, so `reset`, which takes it for writing, waits for it and is
//! then the last user of both; attribute writes that come during such a wait queue behind the
//! `reset` and act on the reset device, as in C.

use crate::abi::Abi;
use crate::comp::algorithm::Named;
use crate::comp::choice::{Choice, Recompressors};
use crate::comp::Codec;
use crate::comp::Params;
use crate::kapi::cpu;
use crate::kapi::disk::{Claim, DiskRef};
use crate::kapi::rwsem::RwSemaphore;
use crate::kapi::zspool::ZsPool;
use crate::slot::{Priority, SlotContent};
use crate::table::{PageStore, Removed, PAGE_SIZE};
use crate::unit::UnitSize;
use crate::Kernel;
use backing::Backing;
use core::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering::Relaxed};
use counters::Stats;
use kernel::prelude::*;
use kernel::sync::{Arc, Mutex, SpinLock};
use kernel::{new_mutex, new_spinlock};
use post_process::PostProcessTurn;
use writeback_settings::WritebackState;

mod algorithm_attrs;
mod backing;
mod block_state;
mod counters;
mod io;
mod page_io;
mod post_process;
mod recompress;
mod slot_access;
mod store_attrs;
mod unit_read;
mod writeback;
mod writeback_settings;

const SECTOR_SHIFT: u32 = 9;

// A slot's value word holds a same-filled page's word: both are 64 bits.
const _: () = assert!(core::mem::size_of::<usize>() == core::mem::size_of::<u64>());

/// Settings changed only under `init_lock`.
struct Config {
    /// Bytes of the disk; 0 while not initialised.
    disksize: u64,
    /// The backing device (`backing_dev`), set before initialisation, closed by `reset`.
    backing: Option<Arc<Backing>>,
}

impl Config {
    const fn new() -> Self {
        Self {
            disksize: 0,
            backing: None,
        }
    }
}

/// Everything an initialised device has: the stored pages and the algorithms' codecs.
#[pin_data]
pub(crate) struct Storage {
    pages: PageStore,
    /// The primary algorithm's streams and decompression contexts.
    #[pin]
    codec: Codec,
    /// The recompression algorithms' codecs.
    recompressors: Recompressors,
    /// Compressed sizes at or above this are stored uncompressed (zsmalloc's huge class).
    huge_class_size: usize,
    /// The compression unit (`compress_unit`) the device was initialised with.
    unit: UnitSize,
    /// The backing device the device was initialised with.
    backing: Option<Arc<Backing>>,
    /// Pages are written back compressed (`compressed_writeback`, 7.3).
    compressed_writeback: bool,
}

impl Storage {
    /// The codec of `priority`'s algorithm, if the device has it.
    #[inline(always)]
    fn comp(&self, priority: Priority) -> Option<&Codec> {
        if priority == Priority::PRIMARY {
            Some(&self.codec)
        } else {
            self.recompressors.get(priority)
        }
    }

    /// Accounts for `old`, taken out of its slot, going away, and gives its backing block
    /// back. After the slot's unlock: the block is reused only once no slot names it.
    #[inline(always)]
    fn removed(&self, stats: &Stats, old: Removed) {
        if let (Removed(SlotContent::WrittenBack(block)), Some(backing)) = (old, &self.backing) {
            backing.release(block);
        }
        stats.removed(old);
    }
}

/// One zram device (`/dev/zramN`).
#[pin_data]
pub(crate) struct Zram {
    id: u32,
    #[pin]
    init_lock: RwSemaphore<Config>,
    /// The compression algorithms and their parameters, by priority, that the next
    /// initialisation uses (and the current one uses). Changed under `init_lock` held for
    /// writing, but by 6.12's `algorithm_params`, which C runs under no lock (inside
    /// `init_lock` in the lock order).
    #[pin]
    choice: Mutex<Choice>,
    /// The initialised state, while initialised.
    #[pin]
    storage: SpinLock<Option<Arc<Storage>>>,
    /// `mem_limit` in pages, 0 for none. Changed under `init_lock`, read by writers.
    limit_pages: AtomicU64,
    /// Whether writes look for same-filled pages (`same_detection`, a zram_rs extension).
    same_detection: AtomicBool,
    /// log2 of the pages of the compression unit the next initialisation uses
    /// (`compress_unit`, a zram_rs extension). Changed under `init_lock` while not
    /// initialised.
    unit_shift: AtomicU32,
    /// The writeback settings.
    writeback: WritebackState,
    /// The post-processing (writeback or recompression) in progress.
    #[pin]
    post_processing: PostProcessTurn,
    stats: Stats,
}

impl Zram {
    /// A new, uninitialised device number `id`.
    pub(crate) fn new(id: u32) -> impl PinInit<Self> {
        pin_init!(Self {
            id,
            init_lock <- RwSemaphore::new(Config::new()),
            choice <- new_mutex!(Choice::new(), "Zram::choice"),
            storage <- new_spinlock!(None, "Zram::storage"),
            limit_pages: AtomicU64::new(0),
            same_detection: AtomicBool::new(true),
            unit_shift: AtomicU32::new(0),
            writeback: WritebackState::new(),
            post_processing <- PostProcessTurn::new(),
            stats: Stats::default(),
        })
    }

    fn storage(&self) -> Option<Arc<Storage>> {
        self.storage.lock().clone()
    }

    /// The disk size in bytes, 0 when not initialised. Without `init_lock`, as C reads it: a
    /// reader does not wait for a `reset` or an initialisation in progress.
    pub(crate) fn disksize(&self) -> u64 {
        // Under the spinlock, without a reference of its own: a `reset` stays the last user
        // of the storage. No overflow: the table has `disksize / PAGE_SIZE` slots.
        self.storage.lock().as_ref().map_or(0, |s| {
            (s.pages.pages() as u64).saturating_mul(PAGE_SIZE as u64)
        })
    }

    /// The pool's huge class size while initialised (looked at without a reference of its
    /// own, as [`Self::disksize`]).
    fn huge_class_size(&self) -> Option<usize> {
        self.storage.lock().as_ref().map(|s| s.huge_class_size)
    }

    /// `initstate`: whether the device is initialised, under `init_lock` held for reading as
    /// C (a read while a `reset` waits answers after it).
    pub(crate) fn initialised(&self) -> bool {
        let _config = self.init_lock.read();
        self.disksize() != 0
    }

    /// Initialises the device with `requested` bytes (rounded up to whole pages): allocates the
    /// slot table and the pool and sets the disk's capacity.
    pub(crate) fn initialise(&self, disk: DiskRef<'_, Zram>, requested: u64) -> Result {
        if requested == 0 {
            return Err(EINVAL);
        }
        let mut config = self.init_lock.write();
        if config.disksize != 0 {
            pr_info!("Cannot change disksize for initialized device\n");
            return Err(EBUSY);
        }
        // PAGE_ALIGN, wrapping like C: a size within a page of 2^64 becomes 0 and fails below.
        let disksize = requested.wrapping_add(PAGE_SIZE as u64 - 1) & !(PAGE_SIZE as u64 - 1);
        // C zram 7.x refuses the wrapped size itself (EINVAL); 6.12 fails to allocate (ENOMEM).
        if Kernel::WRAPPED_DISKSIZE_EINVAL && disksize == 0 {
            return Err(EINVAL);
        }
        let pages = usize::try_from(disksize / PAGE_SIZE as u64).map_err(|_| ENOMEM)?;
        let pool = ZsPool::new(format_args!("zram{}", self.id))?;
        let huge_class_size = pool.huge_class_size();
        let pages = PageStore::new(pages, pool)?;
        let choice = self.choice.lock().clone();
        let algorithm = choice.primary();
        let count = cpu::num_online_cpus() as usize;
        let unit = self.unit_size();
        // The primary algorithm's streams compress whole units.
        let params = Params {
            src_size: PAGE_SIZE << unit.shift(),
            ..choice.params(Priority::PRIMARY)
        };
        // Each algorithm's codec, in priority order (as C's `comps`).
        let codecs = Codec::new(algorithm, params, count)
            .map_err(|error| (algorithm, error))
            .and_then(|codec| Ok((codec, Recompressors::new(&choice, count)?)));
        let (codec, recompressors) = match codecs {
            Ok(both) => both,
            Err((failed, error)) => {
                pr_err!("Cannot initialise {} compressing backend\n", failed.name());
                // As C's `zram_destroy_comps`: a backend that fails to start takes the
                // selections with it; the next initialisation starts from the default
                // algorithm, no recompression algorithm and no parameters. The backing device
                // stays.
                *self.choice.lock() = Choice::new();
                return Err(error);
            }
        };
        let backing = config.backing.clone();
        let storage = Arc::pin_init(
            pin_init!(Storage {
                pages,
                codec <- codec,
                recompressors,
                huge_class_size,
                unit,
                backing,
                compressed_writeback: self.writeback.compressed(),
            }),
            GFP_KERNEL,
        )?;
        // Published exactly while `disksize` is set, both under `init_lock`.
        disk.publish_io(storage.clone()).map_err(|_| EBUSY)?;
        *self.storage.lock() = Some(storage);
        config.disksize = disksize;
        disk.set_capacity_sectors(disksize >> SECTOR_SHIFT);
        Ok(())
    }

    /// `reset`: frees everything stored and returns the device to its uninitialised state;
    /// `EBUSY` while the disk is open.
    pub(crate) fn reset(&self, disk: DiskRef<'_, Zram>) -> Result {
        let claim = disk.claim()?;
        self.reset_device(&claim);
        Ok(())
    }

    /// Writes back the disk's dirty page cache, frees everything stored, returns the settings
    /// to their defaults and zeroes the counters, under a claim of the disk.
    pub(crate) fn reset_device(&self, claim: &Claim<'_, Zram>) {
        claim.disk().sync();
        // Waits for a writeback or recompression in progress, which holds `init_lock` for
        // reading until it has let go of the storage and the backing device.
        let mut config = self.init_lock.write();
        self.limit_pages.store(0, Relaxed);
        self.same_detection.store(true, Relaxed);
        self.unit_shift.store(0, Relaxed);
        claim.disk().set_capacity_sectors(0);
        claim.disk().clear_io_stats();
        let io = claim.take_io();
        let storage = self.storage.lock().take();
        // The last references: free every object, the pool, the table and the codecs (may
        // sleep, so outside the spinlock).
        drop(io);
        drop(storage);
        *config = Config::new();
        *self.choice.lock() = Choice::new();
        self.stats.reset();
    }
}
