// SPDX-License-Identifier: GPL-2.0
//! A device's compression algorithms, by priority: the primary one (`comp_algorithm`,
//! priority 0) and up to three recompression algorithms (`recomp_algorithm`, priorities 1 to
//! 3), each with what `algorithm_params` set for it. [`Choice`] is what the next
//! initialisation uses (the device keeps it under `init_lock`; `reset` clears it);
//! [`Recompressors`] are the codecs of an initialised device's recompression algorithms (the
//! primary algorithm's is the storage's own, on the I/O path). Also how a
//! parameters write finds its priority, and how a dictionary is read.

use super::algorithm::{AlgorithmParams, Named};
use super::{Algorithm, Codec, Params};
use crate::abi::Abi;
use crate::kapi::file::FileContents;
use crate::slot::{Priority, MAX_PRIORITIES};
use crate::Kernel;
use core::fmt;
use kernel::alloc::flags::GFP_KERNEL;
use kernel::prelude::*;
use kernel::str::BStr;
use kernel::sync::Arc;

/// The algorithm and parameters of each priority, for the next initialisation.
#[derive(Clone)]
pub(crate) struct Choice {
    /// The algorithm of each priority: the primary one's always, the others' when set.
    algorithms: [Option<Algorithm>; MAX_PRIORITIES],
    /// What `algorithm_params` set for each priority, whether it has an algorithm or not (as
    /// C keeps them).
    params: [Params; MAX_PRIORITIES],
}

impl Choice {
    /// The default algorithm, no recompression algorithm, no parameters.
    pub(crate) const fn new() -> Self {
        Self {
            algorithms: [Some(Algorithm::DEFAULT), None, None, None],
            params: [Params::UNSET; MAX_PRIORITIES],
        }
    }

    /// The primary algorithm.
    pub(crate) fn primary(&self) -> Algorithm {
        self.algorithm(Priority::PRIMARY)
            .unwrap_or(Algorithm::DEFAULT)
    }

    /// The algorithm of each priority.
    pub(crate) fn algorithms(&self) -> [Option<Algorithm>; MAX_PRIORITIES] {
        self.algorithms
    }

    /// The algorithm of `priority`, if it has one.
    pub(crate) fn algorithm(&self, priority: Priority) -> Option<Algorithm> {
        self.algorithms.get(priority.index()).copied().flatten()
    }

    /// The parameters of `priority`.
    pub(crate) fn params(&self, priority: Priority) -> Params {
        self.params
            .get(priority.index())
            .cloned()
            .unwrap_or(Params::UNSET)
    }

    /// The name of the algorithm of priority number `index`, if there is one.
    pub(crate) fn name_at(&self, index: usize) -> Option<&'static [u8]> {
        self.algorithms
            .get(index)
            .copied()
            .flatten()
            .map(|algorithm| algorithm.name().as_bytes())
    }

    /// The first priority from `from` up whose algorithm is named `name`.
    pub(crate) fn find(&self, name: &[u8], from: Priority) -> Option<Priority> {
        Priority::all()
            .filter(|&p| p >= from)
            .find(|p| self.name_at(p.index()) == Some(name))
    }

    pub(crate) fn set_algorithm(&mut self, priority: Priority, algorithm: Algorithm) {
        if let Some(entry) = self.algorithms.get_mut(priority.index()) {
            *entry = Some(algorithm);
        }
    }

    pub(crate) fn set_params(&mut self, priority: Priority, params: Params) {
        if let Some(entry) = self.params.get_mut(priority.index()) {
            *entry = params;
        }
    }
}

/// The recompression algorithms of an initialised device (C's `comps[1..]`), by priority.
pub(crate) struct Recompressors([Option<Pin<KBox<Codec>>>; MAX_PRIORITIES - 1]);

impl Recompressors {
    /// A codec of `count` streams and decompression contexts for each recompression algorithm
    /// of `choice`, made in priority order; on failure, the algorithm that failed and why.
    pub(crate) fn new(choice: &Choice, count: usize) -> Result<Self, (Algorithm, Error)> {
        let mut all = [None, None, None];
        for (entry, priority) in all.iter_mut().zip(Priority::all().skip(1)) {
            if let Some(algorithm) = choice.algorithm(priority) {
                let codec = Codec::new(algorithm, choice.params(priority), count)
                    .and_then(|codec| KBox::pin_init(codec, GFP_KERNEL))
                    .map_err(|error| (algorithm, error))?;
                *entry = Some(codec);
            }
        }
        Ok(Self(all))
    }

    /// The codec of recompression priority `priority`, if it has one.
    #[inline(always)]
    pub(crate) fn get(&self, priority: Priority) -> Option<&Codec> {
        self.0.get(priority.index().checked_sub(1)?)?.as_deref()
    }

    /// How many there are.
    pub(crate) fn count(&self) -> usize {
        self.0.iter().flatten().count()
    }

    /// Whether no recompression algorithm has a priority above `priority` (C 7.3's
    /// `highest_priority_algorithm()`).
    pub(crate) fn is_last(&self, priority: Priority) -> bool {
        Priority::all()
            .filter(|&p| p > priority)
            .all(|p| self.get(p).is_none())
    }
}

/// The priority an `algorithm_params` write taken at any time (6.12) addresses: `algo` names
/// the first priority with that algorithm (and wins over `priority`), which must lie in 0..=3. (The parameters are
/// kept whether or not the priority has an algorithm, and whether or not the device is
/// initialised.)
pub(crate) fn params_priority_anytime(
    choice: &Choice,
    params: &AlgorithmParams<'_>,
) -> Option<Priority> {
    match params.algo {
        Some(name) => choice.find(name, Priority::PRIMARY),
        None => u64::try_from(params.priority).ok().and_then(c_priority),
    }
}

/// Priority `n`, if C zram of this kernel has it: 0 to 3 with recompression
/// (`CONFIG_ZRAM_MULTI_COMP`, C's `ZRAM_MAX_COMPS` of 4), else only 0.
pub(crate) fn c_priority(n: u64) -> Option<Priority> {
    let comps = if cfg!(zram_rs_multi_comp) {
        MAX_PRIORITIES
    } else {
        1
    };
    Priority::new(n).filter(|priority| priority.index() < comps)
}

/// Replaces the parameters of `priority` with those of `params` and `dict`, the dictionary
/// read for it (C resets them first, so a refused dictionary leaves them reset too).
pub(crate) fn store_params(
    choice: &mut Choice,
    priority: Priority,
    params: &AlgorithmParams<'_>,
    dict: Option<Result<Arc<FileContents>>>,
) -> Result {
    choice.set_params(priority, Params::UNSET);
    let dict = dict.transpose()?;
    choice.set_params(
        priority,
        Params {
            level: params.level,
            backend: params.backend,
            dict,
            ..Params::UNSET
        },
    );
    Ok(())
}

/// Reads the dictionary at `path` (`dict=`), as C zram does: a file that cannot be read, or an
/// empty one, is `EINVAL`, or where the kernel's ABI says so ([`Abi::DICT_READ_ERRNO`]) the
/// read's own errno (`EINVAL` for an empty file), logged.
pub(crate) fn load_dict(path: &[u8]) -> Result<Arc<FileContents>> {
    match FileContents::read_path(path) {
        Ok(contents) => Ok(Arc::new(contents, GFP_KERNEL)?),
        Err(error) if Kernel::DICT_READ_ERRNO => {
            pr_err!(
                "failed to load dictionary {} (err={})\n",
                BStr::from_bytes(path),
                error.to_errno()
            );
            Err(error)
        }
        Err(_) => Err(EINVAL),
    }
}

/// Formats the names of the available algorithms, for messages.
pub(crate) struct AvailableList;

impl fmt::Display for AvailableList {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut first = true;
        for algorithm in Algorithm::ALL {
            if !first {
                f.write_str(" ")?;
            }
            f.write_str(algorithm.name())?;
            first = false;
        }
        Ok(())
    }
}
