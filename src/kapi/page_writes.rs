// SPDX-License-Identifier: GPL-2.0
//! Writes of whole pages to a backing device that run while their submitter goes on: a ring of
//! [`PageWrites`], each owning a page and the completion the bio's end signals (the bio itself
//! goes back to its pool as it ends), with the caller's note of what the write is for; and
//! [`plugged`], which holds the bios a thread submits in the block layer's plug until it
//! sleeps, so that writes of neighbouring blocks reach the device as one request.

use super::bdev::BackingDev;
use super::bounce::BouncePage;
use super::ffi;
use core::mem::MaybeUninit;
use core::sync::atomic::{AtomicU8, Ordering::Relaxed};
use kernel::alloc::flags::GFP_KERNEL;
use kernel::bindings;
use kernel::prelude::*;
use kernel::types::Opaque;

/// The most writes a ring keeps in flight, whatever it is asked for: each holds a page.
pub(crate) const MAX_IN_FLIGHT: usize = 256;

/// What a write's end leaves for its waiter: the bio's status, and the completion it signals.
///
/// # Invariants
///
/// `done` is an initialised completion.
struct Done {
    done: Opaque<bindings::completion>,
    /// The bio's `bi_status`, stored before `done` is signalled.
    status: AtomicU8,
}

/// Ends a page write: keeps the bio's status, gives the bio back (to its shared pool, at once:
/// a bio set's caller may hold only one of its bios), and signals the completion.
///
/// # Safety
///
/// `bio` is a bio submitted by [`PageWrites::submit`], which set its private field to its
/// entry's [`Done`] and holds no other reference to it; the entry waits for the completion
/// before it lets the `Done` go.
unsafe extern "C" fn page_written(bio: *mut bindings::bio) {
    // SAFETY: by the function's contract, the private field is the entry's live `Done`.
    let done = unsafe { &*(*bio).bi_private.cast::<Done>() };
    // SAFETY: the bio is live until the put below; reading its status is plain memory.
    let status = unsafe { (*bio).bi_status };
    done.status.store(status, Relaxed);
    // SAFETY: the submitter's reference, the only one left; the bio is not used after this.
    unsafe { bindings::bio_put(bio) };
    // SAFETY: the completion is initialised (type invariant of `Done`); signalling it orders
    // the status store before the waiter's load.
    unsafe { bindings::complete(done.done.get()) };
}

/// One write: its page, its completion, and while it is in flight its note.
///
/// # Invariants
///
/// While `in_flight` is `Some`, a bio writing `page` is in flight with `done` as its private
/// field, and neither is touched here until `done` has been waited for.
struct Entry<T> {
    page: BouncePage,
    /// Boxed: the bio's end finds it by address, which must not change with the entry's.
    done: KBox<Done>,
    in_flight: Option<T>,
}

impl<T> Entry<T> {
    fn new() -> Result<Self> {
        let page = BouncePage::new()?;
        let done = KBox::new(
            Done {
                done: Opaque::uninit(),
                status: AtomicU8::new(0),
            },
            GFP_KERNEL,
        )?;
        // SAFETY: `done` is a fresh, unshared completion, at its final address (boxed);
        // initialised once, here.
        unsafe { ffi::zram_rs_init_completion(done.done.get()) };
        // INVARIANT: nothing in flight.
        Ok(Self {
            page,
            done,
            in_flight: None,
        })
    }

    /// Waits for the write in flight, if any; returns its note and result.
    fn wait(&mut self) -> Option<(T, Result)> {
        let note = self.in_flight.take()?;
        // SAFETY: the completion is initialised (type invariant of `Done`) and the bio's end
        // signals it once; after this returns the bio is gone and its status stored.
        unsafe { bindings::wait_for_completion_io(self.done.done.get()) };
        let status = self.done.status.load(Relaxed);
        // SAFETY: a status conversion with no precondition.
        let errno = unsafe { bindings::blk_status_to_errno(status) };
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
    /// Up to `count` writes at once (at most [`MAX_IN_FLIGHT`]), at least one: fewer when
    /// memory is short (as C zram 7.3); `ENOMEM` when not even one fits.
    pub(crate) fn new(dev: &'a BackingDev, count: usize) -> Result<Self> {
        let mut entries = KVec::new();
        for _ in 0..count.clamp(1, MAX_IN_FLIGHT) {
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
        let done: *const Done = &*entry.done;
        // SAFETY: a fresh bio, ours until submitted; the `Done` lives, boxed, until its
        // completion has been waited for.
        unsafe { (*bio.as_ptr()).bi_private = done.cast_mut().cast() };
        // SAFETY: as above; `page_written` finds the `Done` through the private field.
        unsafe { (*bio.as_ptr()).bi_end_io = Some(page_written) };
        // SAFETY: a complete bio, submitted once and then left to its end; its page and `Done`
        // stay until `wait`.
        unsafe { bindings::submit_bio(bio.as_ptr()) };
        // INVARIANT: in flight with this entry's page and `Done`.
        entry.in_flight = Some(note);
        // No panic paths: `next < len` and `in_flight < len` here, and `len >= 1`.
        self.next = self
            .next
            .wrapping_add(1)
            .checked_rem(self.entries.len())
            .unwrap_or(0);
        self.in_flight = self.in_flight.saturating_add(1);
        Ok(())
    }

    /// Waits for the oldest write in flight; returns its note and result, `None` when no write
    /// is in flight.
    pub(crate) fn collect(&mut self) -> Option<(T, Result)> {
        let len = self.entries.len();
        // `in_flight <= len` and `next < len`: no wrap past zero.
        let oldest = self
            .next
            .wrapping_add(len)
            .wrapping_sub(self.in_flight)
            .checked_rem(len)?;
        let done = self.entries.get_mut(oldest)?.wait()?;
        self.in_flight = self.in_flight.saturating_sub(1);
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
