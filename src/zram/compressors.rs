// SPDX-License-Identifier: GPL-2.0
//! A device's compression algorithms, by priority: the primary one (`comp_algorithm`,
//! priority 0) and up to three recompression algorithms (`recomp_algorithm`, priorities 1 to
//! 3), each with what `algorithm_params` set for it. [`Choice`] is what the next
//! initialisation uses, kept in the device's settings under `init_lock` and cleared by
//! `reset`; [`Recompressors`] are the streams of an initialised device's recompression
//! algorithms (the primary algorithm's streams are the storage's own, on the I/O path).

use super::Zram;
use crate::algorithm::{self, AlgorithmParams, Named};
use crate::attrs::parse_errno;
use crate::comp::{Algorithm, Params, StreamPool};
use crate::kapi::file::FileContents;
use crate::recompress_args;
use crate::slot::{Priority, MAX_PRIORITIES};
use core::fmt::{self, Write};
use kernel::alloc::flags::GFP_KERNEL;
use kernel::prelude::*;
use kernel::str::BStr;
use kernel::sync::Arc;

/// The algorithm and parameters of each priority, for the next initialisation.
#[derive(Clone)]
pub(super) struct Choice {
    /// The algorithm of each priority: the primary one's always, the others' when set.
    algorithms: [Option<Algorithm>; MAX_PRIORITIES],
    /// What `algorithm_params` set for each priority, whether it has an algorithm or not (as
    /// C keeps them).
    params: [Params; MAX_PRIORITIES],
}

impl Choice {
    /// The default algorithm, no recompression algorithm, no parameters.
    pub(super) const fn new() -> Self {
        Self {
            algorithms: [Some(Algorithm::DEFAULT), None, None, None],
            params: [Params::UNSET; MAX_PRIORITIES],
        }
    }

    /// The primary algorithm.
    pub(super) fn primary(&self) -> Algorithm {
        self.algorithm(Priority::PRIMARY)
            .unwrap_or(Algorithm::DEFAULT)
    }

    /// The algorithm of `priority`, if it has one.
    pub(super) fn algorithm(&self, priority: Priority) -> Option<Algorithm> {
        self.algorithms.get(priority.index()).copied().flatten()
    }

    /// The parameters of `priority`.
    pub(super) fn params(&self, priority: Priority) -> Params {
        self.params
            .get(priority.index())
            .cloned()
            .unwrap_or(Params::UNSET)
    }

    /// The name of the algorithm of priority number `index`, if there is one.
    pub(super) fn name_at(&self, index: usize) -> Option<&'static [u8]> {
        self.algorithms
            .get(index)
            .copied()
            .flatten()
            .map(|algorithm| algorithm.name().as_bytes())
    }

    /// The first priority from `from` up whose algorithm is named `name`.
    fn find(&self, name: &[u8], from: Priority) -> Option<Priority> {
        Priority::all()
            .filter(|&p| p >= from)
            .find(|p| self.name_at(p.index()) == Some(name))
    }

    fn set_algorithm(&mut self, priority: Priority, algorithm: Algorithm) {
        if let Some(entry) = self.algorithms.get_mut(priority.index()) {
            *entry = Some(algorithm);
        }
    }

    fn set_params(&mut self, priority: Priority, params: Params) {
        if let Some(entry) = self.params.get_mut(priority.index()) {
            *entry = params;
        }
    }
}

/// A recompression algorithm of an initialised device, with its streams.
struct Recompressor {
    algorithm: Algorithm,
    streams: Pin<KBox<StreamPool>>,
}

/// The recompression algorithms of an initialised device (C's `comps[1..]`), by priority.
pub(super) struct Recompressors([Option<Recompressor>; MAX_PRIORITIES - 1]);

impl Recompressors {
    /// `count` streams for each recompression algorithm of `choice`, made in priority order;
    /// on failure, the algorithm that failed and why.
    pub(super) fn new(choice: &Choice, count: usize) -> Result<Self, (Algorithm, Error)> {
        let mut all = [None, None, None];
        for (entry, priority) in all.iter_mut().zip(Priority::all().skip(1)) {
            if let Some(algorithm) = choice.algorithm(priority) {
                let streams = StreamPool::new(algorithm, choice.params(priority), count)
                    .and_then(|streams| KBox::pin_init(streams, GFP_KERNEL))
                    .map_err(|error| (algorithm, error))?;
                *entry = Some(Recompressor { algorithm, streams });
            }
        }
        Ok(Self(all))
    }

    /// The algorithm and streams of recompression priority `priority`, if it has one.
    #[inline(always)]
    pub(super) fn get(&self, priority: Priority) -> Option<(Algorithm, &StreamPool)> {
        let entry = self.0.get(priority.index().checked_sub(1)?)?.as_ref()?;
        Some((entry.algorithm, &entry.streams))
    }

    /// How many there are.
    pub(super) fn count(&self) -> usize {
        self.0.iter().flatten().count()
    }

    /// Whether no recompression algorithm has a priority above `priority` (C 7.3's
    /// `highest_priority_algorithm()`).
    pub(super) fn is_last(&self, priority: Priority) -> bool {
        Priority::all()
            .filter(|&p| p > priority)
            .all(|p| self.get(p).is_none())
    }
}

impl Zram {
    /// The `comp_algorithm` line.
    pub(crate) fn write_algorithms(&self, out: &mut impl Write) -> fmt::Result {
        let _config = self.init_lock.read();
        let selected = self.choice.lock().primary();
        algorithm::write_list(out, selected)
    }

    /// The `recomp_algorithm` lines: `#N: ` and the list with the algorithm bracketed, for each
    /// recompression priority that has one.
    pub(crate) fn write_recomp_algorithms(&self, out: &mut impl Write) -> fmt::Result {
        let _config = self.init_lock.read();
        let algorithms = self.choice.lock().algorithms;
        for (priority, selected) in Priority::all().zip(algorithms).skip(1) {
            if let Some(selected) = selected {
                write!(out, "#{}: ", priority.get())?;
                algorithm::write_list(out, selected)?;
            }
        }
        Ok(())
    }

    /// `comp_algorithm`: selects the primary algorithm for the next initialisation.
    pub(crate) fn set_algorithm(&self, input: &[u8]) -> Result {
        self.select_algorithm(Priority::PRIMARY, input)
    }

    /// `recomp_algorithm`: `algo=NAME [priority=N]` selects a recompression algorithm for the
    /// next initialisation.
    pub(crate) fn set_recomp_algorithm(&self, input: &[u8]) -> Result {
        let request = recompress_args::recomp_algorithm(input).map_err(parse_errno)?;
        self.select_algorithm(request.priority, request.name)
    }

    /// Selects the algorithm named by `input` for `priority` (7.x: and forgets the parameters
    /// set for the previous one); `EBUSY` once initialised.
    fn select_algorithm(&self, priority: Priority, input: &[u8]) -> Result {
        // 7.x compares the name as written.
        let chosen = if cfg!(zram_abi_7_3) {
            algorithm::parse_name_7_3(input)
        } else {
            algorithm::parse_name(input)
        }
        .map_err(|error| match error {
            algorithm::NameError::TooLong => E2BIG,
            algorithm::NameError::Unknown => {
                let name = crate::parse::c_str(input);
                let name = name.strip_suffix(b"\n").unwrap_or(name);
                pr_info!(
                    "unknown compression algorithm '{}'; available: {}\n",
                    kernel::str::BStr::from_bytes(name),
                    format_args!("{AvailableList}")
                );
                EINVAL
            }
        })?;
        let config = self.init_lock.write();
        if config.disksize != 0 {
            pr_info!("Can't change algorithm for initialized device\n");
            return Err(EBUSY);
        }
        let mut choice = self.choice.lock();
        choice.set_algorithm(priority, chosen);
        if cfg!(zram_abi_7_3) {
            choice.set_params(priority, Params::UNSET);
        }
        Ok(())
    }

    /// Applies an `algorithm_params` write, as C zram of the kernel built for.
    pub(crate) fn set_algorithm_params(&self, params: AlgorithmParams<'_>) -> Result {
        if cfg!(zram_abi_7_3) {
            return self.set_algorithm_params_7_3(params);
        }
        // C 6.12 reads the dictionary under no lock: here before `init_lock`, so that a slow
        // or large file holds up nothing else of the device; and only for a priority C
        // accepts (looked up again below: an `algorithm_params` write racing a change of the
        // algorithms sees one of them, as in C). Every failure is `EINVAL`.
        let dict = match params.dict {
            None => None,
            Some(path) => {
                params_priority_6_12(&self.choice.lock(), &params).ok_or(EINVAL)?;
                Some(load_dict(path))
            }
        };
        // C 6.12 takes no device lock: a writeback or a waiting `reset` does not hold this up,
        // and a `reset` after it clears what it set.
        let mut choice = self.choice.lock();
        let priority = params_priority_6_12(&choice, &params).ok_or(EINVAL)?;
        store_params(&mut choice, priority, &params, dict)
    }

    /// `algorithm_params` as C zram 7.x: refused once initialised; a `priority` is checked when
    /// given, and an `algo` must name the algorithm at that priority (or, without one, some
    /// priority's); the priority's parameters are then replaced as a whole.
    fn set_algorithm_params_7_3(&self, params: AlgorithmParams<'_>) -> Result {
        let config = self.init_lock.write();
        if config.disksize != 0 {
            return Err(EBUSY);
        }
        let mut choice = self.choice.lock();
        let given = if params.priority_given {
            Some(
                u64::try_from(params.priority)
                    .ok()
                    .and_then(c_priority)
                    .ok_or(EINVAL)?,
            )
        } else {
            None
        };
        let priority = match (given, params.algo) {
            (Some(priority), Some(name)) => {
                if choice.name_at(priority.index()) != Some(name) {
                    return Err(EINVAL);
                }
                priority
            }
            (Some(priority), None) => priority,
            (None, Some(name)) => choice.find(name, Priority::PRIMARY).ok_or(EINVAL)?,
            (None, None) => Priority::PRIMARY,
        };
        // C 7.3 reads the dictionary under its device lock.
        let dict = params.dict.map(load_dict);
        store_params(&mut choice, priority, &params, dict)
    }
}

/// The priority a 6.12 `algorithm_params` write addresses: `algo` names the first priority
/// with that algorithm (and wins over `priority`), which must lie in 0..=3. (The parameters are
/// kept whether or not the priority has an algorithm, and whether or not the device is
/// initialised.)
fn params_priority_6_12(choice: &Choice, params: &AlgorithmParams<'_>) -> Option<Priority> {
    match params.algo {
        Some(name) => choice.find(name, Priority::PRIMARY),
        None => u64::try_from(params.priority).ok().and_then(c_priority),
    }
}

/// Priority `n`, if C zram of this kernel has it: 0 to 3 with recompression
/// (`CONFIG_ZRAM_MULTI_COMP`, C's `ZRAM_MAX_COMPS` of 4), else only 0.
fn c_priority(n: u64) -> Option<Priority> {
    let comps = if cfg!(zram_rs_multi_comp) {
        MAX_PRIORITIES
    } else {
        1
    };
    Priority::new(n).filter(|priority| priority.index() < comps)
}

/// Replaces the parameters of `priority` with those of `params` and `dict`, the dictionary
/// read for it (C resets them first, so a refused dictionary leaves them reset too).
fn store_params(
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
            // 6.12 has no `deflate.winbits`: the parse leaves it unset there.
            deflate_winbits: params.deflate_winbits,
            dict,
        },
    );
    Ok(())
}

/// Reads the dictionary at `path` (`dict=`), as C zram does: a file that cannot be read, or an
/// empty one, is `EINVAL` on 6.12; on 7.3 the read's own errno (`EINVAL` for an empty file),
/// logged.
fn load_dict(path: &[u8]) -> Result<Arc<FileContents>> {
    match FileContents::read_path(path) {
        Ok(contents) => Ok(Arc::new(contents, GFP_KERNEL)?),
        Err(error) if cfg!(zram_abi_7_3) => {
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
struct AvailableList;

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
