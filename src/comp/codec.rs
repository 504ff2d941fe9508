// SPDX-License-Identifier: GPL-2.0
//! One algorithm of an initialised device, what C zram's `zcomp` is ([`Codec`]): its
//! compression streams and, in a pool of their own, its decompression contexts, one of each
//! per CPU online at initialisation, and its decompressor without state where it has one.
//!
//! The two pools are apart so that reads never wait behind compression: a writer holds a
//! stream for the whole of a compression (milliseconds at zstd's high levels), a reader holds
//! a decompression context only while it decompresses one page. C 6.12 lends one per-CPU
//! stream to both and keeps a reader off its CPU's stream with preemption disabled; C 7.x
//! makes the per-CPU stream a mutex, which a reader waits on behind a writer.
//!
//! The pools are sized once, at initialisation, rather than per CPU following CPU hotplug: a
//! CPU that comes online later borrows from the same places (a borrower tries every place, its
//! own first), so nothing is missing, only fewer places than CPUs.

use super::pool::{Pool, PoolGuard};
use super::{Algorithm, Params, Reader, Stateless, Stream};
use crate::kapi::lockdep::LockClass;
use kernel::alloc::flags::GFP_KERNEL;
use kernel::alloc::KVec;
use kernel::prelude::*;

/// A borrowed compression stream.
pub(crate) type StreamGuard<'a> = PoolGuard<'a, Stream>;
/// A borrowed decompression context.
pub(crate) type ReaderGuard<'a> = PoolGuard<'a, Reader>;

/// An algorithm's compression streams and decompression contexts.
#[pin_data]
pub(crate) struct Codec {
    #[pin]
    streams: Pool<Stream>,
    #[pin]
    readers: Pool<Reader>,
    stateless: Option<Stateless>,
}

impl Codec {
    /// `count` (at least one) streams and as many decompression contexts of `algorithm` with
    /// `params`.
    pub(crate) fn new(
        algorithm: Algorithm,
        params: Params,
        count: usize,
    ) -> Result<impl PinInit<Self>> {
        let count = count.max(1);
        let first = Stream::new(algorithm, params.clone(), None)?;
        let mut readers = KVec::with_capacity(count, GFP_KERNEL)?;
        for _ in 0..count {
            readers.push(Reader::new(algorithm, &params, &first)?, GFP_KERNEL)?;
        }
        let mut streams = KVec::with_capacity(count, GFP_KERNEL)?;
        for _ in 1..count {
            streams.push(
                Stream::new(algorithm, params.clone(), Some(&first))?,
                GFP_KERNEL,
            )?;
        }
        streams.push(first, GFP_KERNEL)?;
        let streams = Pool::new(LockClass::Stream, streams)?;
        let readers = Pool::new(LockClass::Reader, readers)?;
        let stateless = Stateless::new(algorithm, &params);
        Ok(pin_init!(Self {
            streams <- streams,
            readers <- readers,
            stateless,
        }))
    }

    /// The compression streams.
    #[inline(always)]
    pub(crate) fn streams(&self) -> &Pool<Stream> {
        &self.streams
    }

    /// The decompression contexts.
    #[inline(always)]
    pub(crate) fn readers(&self) -> &Pool<Reader> {
        &self.readers
    }

    /// The decompressor that needs no context, when the algorithm and parameters have one
    /// ([`Stateless`]): readers then borrow nothing.
    #[inline(always)]
    pub(crate) fn stateless(&self) -> Option<Stateless> {
        self.stateless
    }
}
