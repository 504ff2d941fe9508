// SPDX-License-Identifier: GPL-2.0
//! A device's algorithm attributes: `comp_algorithm`, `recomp_algorithm` and
//! `algorithm_params` read and change the device's [`Choice`] for the next initialisation,
//! under `init_lock` as C zram of the kernel built for takes them.

use super::Zram;
use crate::abi::{Abi, ParamsRule};
use crate::comp::algorithm::{self, AlgorithmParams};
use crate::comp::choice::{
    c_priority, load_dict, params_priority_anytime, store_params, AvailableList,
};
use crate::comp::Params;
use crate::recompress_args;
use crate::slot::Priority;
use crate::Kernel;
use core::fmt::{self, Write};
use kernel::prelude::*;

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
        let algorithms = self.choice.lock().algorithms();
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
        let request = recompress_args::recomp_algorithm(input)?;
        self.select_algorithm(request.priority, request.name)
    }

    /// Selects the algorithm named by `input` for `priority` (and, where the kernel's ABI says
    /// so, forgets the parameters set for the previous one); `EBUSY` once initialised.
    fn select_algorithm(&self, priority: Priority, input: &[u8]) -> Result {
        let chosen = Kernel::algorithm_name(input).map_err(|error| match error {
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
        if Kernel::ALGORITHM_CHANGE_FORGETS_PARAMS {
            choice.set_params(priority, Params::UNSET);
        }
        Ok(())
    }

    /// Applies an `algorithm_params` write, as C zram of the kernel built for.
    pub(crate) fn set_algorithm_params(&self, params: AlgorithmParams<'_>) -> Result {
        match Kernel::PARAMS {
            ParamsRule::Anytime => self.set_algorithm_params_anytime(params),
            ParamsRule::BeforeInit => self.set_algorithm_params_before_init(params),
        }
    }

    /// `algorithm_params` as C zram 6.12: taken at any time, under no device lock; `algo` wins
    /// over `priority`; every failure is `EINVAL`.
    fn set_algorithm_params_anytime(&self, params: AlgorithmParams<'_>) -> Result {
        // C 6.12 reads the dictionary under no lock: here before `init_lock`, so that a slow
        // or large file holds up nothing else of the device; and only for a priority C
        // accepts (looked up again below: an `algorithm_params` write racing a change of the
        // algorithms sees one of them, as in C). Every failure is `EINVAL`.
        let dict = match params.dict {
            None => None,
            Some(path) => {
                params_priority_anytime(&self.choice.lock(), &params).ok_or(EINVAL)?;
                Some(load_dict(path))
            }
        };
        // C 6.12 takes no device lock: a writeback or a waiting `reset` does not hold this up,
        // and a `reset` after it clears what it set.
        let mut choice = self.choice.lock();
        let priority = params_priority_anytime(&choice, &params).ok_or(EINVAL)?;
        store_params(&mut choice, priority, &params, dict)
    }

    /// `algorithm_params` as C zram 7.x: refused once initialised; a `priority` is checked when
    /// given, and an `algo` must name the algorithm at that priority (or, without one, some
    /// priority's); the priority's parameters are then replaced as a whole.
    fn set_algorithm_params_before_init(&self, params: AlgorithmParams<'_>) -> Result {
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
