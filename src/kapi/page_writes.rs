// SPDX-License-Identifier: GPL-2.0
//! Writes of whole pages to a backing device that run while their submitter goes on: a ring of
//! [`PageWrites`], each owning a page and, while its write is in flight, the bio and the
//! completion the bio's end signals, with the caller's note of what the write is for; and
//! [`plugged`], which holds the bios a thread submits in the block layer's plug until it
//! sleeps, so that writes of neighbouring blocks reach the device as one request.

use super::bdev::BackingDev;
use super::bounce::BouncePage;
use super::ffi;
use core::mem::MaybeUninit;
use core::ptr::NonNull;
use kernel::alloc::flags::GFP_KERNEL;
use kernel::bindings;
use kernel::prelude::*;
use kernel::types::Opaque;

/// Signals the completion the bio's private field points to.
///
/// # Safety
///
/// `bio` is a bio submitted by [`PageWrites::submit`], which set its private field to its
/// entry's completion; the entry waits for that completion before it lets the memory go.
unsafe extern "C" fn page_written(bio: *mut bindings::bio) {
    // SAFETY: by the function's contract, the private field is a live, initialised completion.
    unsafe { bindings::complete((*bio).bi_private.cast()) };
}

/// One write: its page, its completion, and while it is in flight its bio and note.
///
/// # Invariants
///
/// `done` is an initialised completion. While `in_flight` is `Some`, its bio is submitted with
/// `page` as its page and `done` as its private field, and neither is touched here until
/// `done` has been waited for.
struct Entry<T> {
    page: BouncePage,
    /// Boxed: the bio's end finds it by address, which must not change with the entry's.
    done: KBox<Opaque<bindings::completion>>,
    in_flight: Option<(NonNull<bindings::bio>, T)>,
}

impl<T> Entry<T> {
    fn new() -> Result<Self> {
        let page = BouncePage::new()?;
        let done = KBox::new(Opaque::uninit(), GFP_KERNEL)?;
        // SAFETY: `done` is a fresh, unshared completion; initialised once, here.
        unsafe { ffi::zram_rs_init_completion(done.get()) };
        // INVARIANT: initialised above; nothing in flight.
        Ok(Self {
            page,
            done,
            in_flight: None,
        })
    }

    /// Waits for the write in flight, if any; returns its note and result.
    fn wait(&mut self) -> Option<(T, Result)> {
        let (bio, note) = self.in_flight.take()?;
        // SAFETY: the completion is initialised (type invariant) and the bio's end signals it
        // once; after this returns the bio is done.
        unsafe { bindings::wait_for_completion_io(self.done.get()) };
        // SAFETY: the bio is done and still ours: reading its status is plain memory.
        let status = unsafe { (*bio.as_ptr()).bi_status };
        // SAFETY: a status conversion with no precondition.
        let errno = unsafe { bindings::blk_status_to_errno(status) };
        // SAFETY: drops our reference to the bio, which is done.
        unsafe { bindings::bio_put(bio.as_ptr()) };
        let result = if errno == 0 {
            Ok(())
        } else {
            Err(Error::from_errno(errno))
        };
        Some((note, result))
    }
}

impl<T> Drop for Entry<T> {
    fn drop(&mut self) {
        // The page and the completion are freed after the drop: the device must be done.
        let _ = self.wait();
    }
}

/// A ring of page writes to one backing device, each carrying the caller's note `T` while it is
/// in flight. Writes complete in any order; they are collected oldest first.
pub(crate) struct PageWrites<'a, T> {
    dev: &'a BackingDev,
    entries: KVec<Entry<T>>,
    /// The entry the next write uses.
    next: usize,
    /// Writes in flight: the `in_flight` entries before `next`, going round.
    in_flight: usize,
}

impl<'a, T> PageWrites<'a, T> {
    /// Up to `count` writes at once, at least one: fewer when memory is short (as C zram 7.3);
    /// `ENOMEM` when not even one fits.
    pub(crate) fn new(dev: &'a BackingDev, count: usize) -> Result<Self> {
        let mut entries = KVec::new();
        for _ in 0..count.max(1) {
            let Ok(entry) = Entry::new() else { break };
            if entries.push(entry, GFP_KERNEL).is_err() {
                break;
            }
        }
        if entries.is_empty() {
            return Err(ENOMEM);
        }
        Ok(Self {
            dev,
            entries,
            next: 0,
            in_flight: 0,
        })
    }

    /// Whether every write is in flight (the next needs [`Self::collect`] first).
    pub(crate) fn full(&self) -> bool {
        self.in_flight == self.entries.len()
    }

    /// The page of the next write, `None` while every write is in flight.
    pub(crate) fn page(&mut self) -> Option<&mut BouncePage> {
        if self.full() {
            return None;
        }
        let entry = self.entries.get_mut(self.next)?;
        Some(&mut entry.page)
    }

    /// Writes the next write's page (filled through [`Self::page`]) to `block` of the device,
    /// noting `note` for the time it is collected. Fails, handing the note back, for a block
    /// past the end or while every write is in flight.
    pub(crate) fn submit(&mut self, block: usize, note: T) -> Result<(), (T, Error)> {
        if self.full() {
            return Err((note, EBUSY));
        }
        let dev = self.dev;
        let Some(entry) = self.entries.get_mut(self.next) else {
            return Err((note, EINVAL));
        };
        let bio = match dev.page_bio(block, entry.page.raw_page(), bindings::req_op_REQ_OP_WRITE) {
            Ok(bio) => bio,
            Err(error) => return Err((note, error)),
        };
        // The completion's count is 0 here: each write signals it once and is waited for once.
        // SAFETY: a fresh bio, ours until submitted; the completion is initialised (type
        // invariant of `Entry`) and lives, boxed, until it has been waited for.
        unsafe { (*bio.as_ptr()).bi_private = entry.done.get().cast() };
        // SAFETY: as above; `page_written` finds the completion through the private field.
        unsafe { (*bio.as_ptr()).bi_end_io = Some(page_written) };
        // SAFETY: a complete bio, submitted once; its page and completion stay until `wait`.
        unsafe { bindings::submit_bio(bio.as_ptr()) };
        // INVARIANT: in flight with this entry's page and completion.
        entry.in_flight = Some((bio, note));
        self.next = (self.next + 1) % self.entries.len();
        self.in_flight += 1;
        Ok(())
    }

    /// Waits for the oldest write in flight; returns its note and result, `None` when no write
    /// is in flight.
    pub(crate) fn collect(&mut self) -> Option<(T, Result)> {
        let len = self.entries.len();
        let oldest = (self.next + len - self.in_flight) % len;
        let done = self.entries.get_mut(oldest)?.wait()?;
        self.in_flight -= 1;
        Some(done)
    }
}

/// Runs `f` with the block layer's plug on this thread: the bios it submits are held, and
/// those of neighbouring blocks merged, until it sleeps or returns (`blk_start_plug()`).
pub(crate) fn plugged<R>(f: impl FnOnce() -> R) -> R {
    let mut plug = MaybeUninit::<bindings::blk_plug>::uninit();
    // SAFETY: `blk_start_plug()` initialises the plug, which stays at this address until
    // `blk_finish_plug()` below takes it off the thread again.
    unsafe { bindings::blk_start_plug(plug.as_mut_ptr()) };
    let result = f();
    // SAFETY: the plug started above, on this thread.
    unsafe { bindings::blk_finish_plug(plug.as_mut_ptr()) };
    result
}
